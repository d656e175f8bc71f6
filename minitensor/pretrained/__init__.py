# ruff: noqa: F401  (this file re-exports)
"""Pretrained BERT-style sentence encoders (e.g. all-MiniLM-L6-v2) on minitensor's ``nn`` layers.

Needs the optional extra ``pretrained`` (``pip install -e ".[pretrained]"``:
safetensors and tokenizers); importing this package does not, loading a model does.

>>> from minitensor.pretrained import SentenceEncoder
>>> encoder = SentenceEncoder.from_pretrained()          # doctest: +SKIP
>>> encoder.encode(["Hello world"]).shape               # doctest: +SKIP
(1, 384)

See docs/pretrained.md for the checkpoint layout and the name mapping.
"""

from .bert import BertEmbeddings, BertModel
from .checkpoint import convert_state_dict, load_bert_weights
from .config import BertConfig
from .paths import default_model_dir
from .pooling import l2_normalize, mean_pool
from .sentence_encoder import SentenceEncoder
from .tokenizer import BertTokenizer
