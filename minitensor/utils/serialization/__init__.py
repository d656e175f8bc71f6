"""Checkpoints that move both ways between minitensor and PyTorch, never executing a file.

``mt.save`` writes PyTorch's own checkpoint format (the zip archive ``torch.save`` writes), so
``torch.load(f, weights_only=True)`` reads it; ``mt.load`` reads PyTorch's files without PyTorch,
by interpreting only what PyTorch 2.13's ``weights_only=True`` allows (tensors, containers,
numbers, strings, ``torch.Size``), and never ``pickle.load``: nothing a file names is imported or
run.  Whole modules load only for classes allowed with ``safe_globals`` / ``add_safe_globals``.

>>> mt.save({"model": model.state_dict(), "optimizer": opt.state_dict(), "step": 50}, "ckpt.pt")
>>> checkpoint = mt.load("ckpt.pt")                     # also a file torch.save wrote
>>> with mt.serialization.safe_globals([RNNModel, nn.LSTM, nn.Linear]):
...     model = mt.load("model.pt")                     # torch.save(model, "model.pt")

The files, from the ground up:

- ``pickle_writer.py``: the pickle opcodes a checkpoint's ``data.pkl`` uses, written;
- ``pickle_reader.py``: an interpreter of those opcodes that asks an allowlist about names;
- ``torch_names.py``: the names PyTorch's files use (storages, dtypes, ``nn`` classes);
- ``storages.py``: tensors as views of flat storages, both ways;
- ``modules.py``, ``module_layouts.py``: whole modules in PyTorch's layout, both ways;
- ``allowlist.py``: what each allowed name means, and the user's ``safe_globals``;
- ``archive.py``: the zip layout (records, 64-byte alignment);
- ``saving.py``, ``loading.py``: ``save`` and ``load``; ``npz_format.py``: minitensor's earlier files.
"""

from .allowlist import add_safe_globals, clear_safe_globals, get_safe_globals, safe_globals
from .loading import load
from .pickle_reader import CheckpointError
from .saving import save

__all__ = ["save", "load", "safe_globals", "add_safe_globals", "get_safe_globals", "clear_safe_globals",
           "CheckpointError"]  # fmt: skip
