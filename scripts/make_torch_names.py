"""Write minitensor/_torch_names.py: the public names of PyTorch's Tensor class.

minitensor uses the list for its error message when a Tensor attribute PyTorch has is
missing here ("minitensor does not implement Tensor.<name>"), which tells such a name
from a typo.  Made with PyTorch 2.13.0 (CPU)::

    pip install torch==2.13.0
    python scripts/make_torch_names.py
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import torch

names = sorted(n for n in dir(torch.Tensor) if not n.startswith("_"))
body = textwrap.fill(" ".join(names), width=100)
text = f'''"""The public attribute names of PyTorch's ``Tensor`` (PyTorch {torch.__version__.split("+")[0]}), written by
``scripts/make_torch_names.py``: minitensor tells a PyTorch name it lacks from a typo with it."""

TENSOR_ATTRIBUTES = frozenset(
    """
{body}
""".split()
)
'''
Path(__file__).resolve().parents[1].joinpath("minitensor", "_torch_names.py").write_text(text)
