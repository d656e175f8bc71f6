"""The switch itself: put modules under the names ``torch`` and ``torch.*`` in ``sys.modules``.

``install()`` builds the table below and registers every entry; ``import torch.nn``
then finds ``sys.modules['torch.nn']`` without searching the disk.  A finder
placed first on ``sys.meta_path`` turns an import of any other ``torch.*``
name into a ModuleNotFoundError that says minitensor does not provide it.

The table:

- minitensor's packages and every submodule already imported under them
  (``minitensor.nn.functional`` -> ``torch.nn.functional``, ``minitensor.optim.lr_scheduler``
  -> ``torch.optim.lr_scheduler``, ``minitensor.utils.data`` -> ``torch.utils.data`` ...);
  a submodule not imported yet is found by the finder when ``torch.<its path>`` is imported
  (``import torch.autograd.functional`` imports ``minitensor.autograd.functional``, the same module);
- ``torch`` itself (``_torch.py``) and ``torch.nn``: modules that forward every
  attribute to minitensor's and add PyTorch's extra names (``torch.cuda``,
  ``torch.nn.modules.linear`` ...);
- the GPU, distributed and export modules of ``cuda.py``, ``backends.py``, ``unavailable.py``.
"""

from __future__ import annotations

import importlib.abc
import importlib.util
import os
import sys
import types

import minitensor

from . import _torch, backends, cuda, functorch, unavailable

_HERE = os.path.dirname(os.path.abspath(__file__))

# minitensor packages that stand for torch's (their submodules follow them).
_PACKAGES = ("autograd", "distributions", "func", "nn", "optim", "profiler", "testing", "utils")

# torch.nn.modules.<file>: the files of PyTorch's nn.modules package.
_NN_FILES = (
    "activation", "batchnorm", "container", "conv", "dropout", "flatten", "linear", "loss", "module",
    "normalization", "pooling", "rnn", "sparse", "transformer",
)  # fmt: skip


def _forwarding_module(name: str, target: types.ModuleType) -> types.ModuleType:
    """A module ``name`` whose attributes are ``target``'s (plus any set on it)."""
    module = types.ModuleType(name, target.__doc__)

    def __getattr__(attr: str):
        if attr.startswith("__"):
            raise AttributeError(attr)
        try:
            return getattr(target, attr)
        except AttributeError:
            raise AttributeError(f"{name} (minitensor) has no attribute {attr!r}: not implemented") from None

    module.__getattr__ = __getattr__
    module.__path__ = []  # a package: ``import name.sub`` asks the finders
    return module


def build() -> dict:
    """``{module name: module}`` for every ``torch`` name the switch provides."""
    table = {}
    for fullname, module in list(sys.modules.items()):
        for package in _PACKAGES:
            prefix = f"minitensor.{package}"
            if fullname == prefix or fullname.startswith(prefix + "."):
                table["torch" + fullname[len("minitensor") :]] = module
    nn = _forwarding_module("torch.nn", minitensor.nn)
    nn_modules = _forwarding_module("torch.nn.modules", minitensor.nn)
    table.update({"torch": _torch, "torch.nn": nn, "torch.nn.modules": nn_modules})
    for file in _NN_FILES:
        table[f"torch.nn.modules.{file}"] = _forwarding_module(f"torch.nn.modules.{file}", minitensor.nn)
    # PyTorch's Linear subclass for MultiheadAttention.out_proj (named in word_language_model's safe_globals)
    table["torch.nn.modules.linear"].NonDynamicallyQuantizableLinear = minitensor.nn.Linear
    table.update({"torch.cuda": cuda, "torch.cuda.amp": cuda.amp, "torch.amp": cuda.torch_amp})
    table["torch.accelerator"] = cuda.accelerator
    table.update(backends.modules())
    table.update(unavailable.modules())
    table["functorch"] = functorch.module()  # (torch.func's older name)
    # save, load, safe_globals, add_safe_globals, get_safe_globals, clear_safe_globals
    table["torch.serialization"] = _forwarding_module("torch.serialization", minitensor.serialization)
    # Make each synthetic module an attribute of its synthetic parent (torch.nn.modules.linear ...).
    for fullname, module in table.items():
        parent, _, child = fullname.rpartition(".")
        if parent in table and _is_ours(table[parent]):
            setattr(table[parent], child, module)
    return table


def _is_ours(module) -> bool:
    """Whether ``module`` was made for the switch (so setting attributes on it touches nothing else)."""
    name = module.__name__
    return name.startswith("torch") or name.startswith("minitensor.compat")


# torch modules loaded only when imported, from a file of this package (``tensorboard.py`` needs
# the tensorboard package, as PyTorch's does: without it, importing the module raises).
_ON_IMPORT = {"torch.utils.tensorboard": "tensorboard.py"}


def _minitensor_module(fullname: str) -> str | None:
    """``torch.<package>.<path>`` -> ``minitensor.<package>.<path>`` when that module exists, else None."""
    parts = fullname.split(".")
    if len(parts) < 3 or parts[1] not in _PACKAGES:
        return None
    name = "minitensor." + ".".join(parts[1:])
    try:
        return name if importlib.util.find_spec(name) is not None else None
    except ModuleNotFoundError:  # a parent on the path is not a package
        return None


class _SameModule(importlib.abc.Loader):
    """Loads ``torch.<path>`` as minitensor's module itself (one module under two names, as the table does)."""

    def __init__(self, name: str) -> None:
        self.name = name
        self._spec = None

    def create_module(self, spec):
        module = importlib.import_module(self.name)
        self._spec = module.__spec__
        return module

    def exec_module(self, module) -> None:
        module.__spec__ = self._spec  # the import system set the torch name's spec: the module keeps its own


class _MissingTorchModule(importlib.abc.MetaPathFinder):
    """Finds a ``torch.*`` submodule minitensor has but has not imported yet; loads the modules of
    ``_ON_IMPORT``; refuses, clearly, any other ``torch.*`` module the table does not have."""

    def find_spec(self, fullname: str, path, target=None):
        if fullname in _ON_IMPORT:
            return importlib.util.spec_from_file_location(fullname, os.path.join(_HERE, _ON_IMPORT[fullname]))
        if fullname == "torch" or fullname.startswith("torch."):
            ours = _minitensor_module(fullname)
            if ours is not None:
                return importlib.util.spec_from_loader(fullname, _SameModule(ours))
            raise ModuleNotFoundError(
                f"No module named {fullname!r}: minitensor's PyTorch switch does not provide it "
                "(docs/pytorch.md lists what is supported)",
                name=fullname,
            )
        return None


_finder = _MissingTorchModule()


def is_installed() -> bool:
    """Whether ``import torch`` currently gives minitensor."""
    return sys.modules.get("torch") is _torch


def install() -> None:
    """Make ``import torch`` (and ``torch.nn``, ``torch.optim`` ...) give minitensor, in this process.

    Call it before the first ``import torch``.  Raises RuntimeError if the real
    PyTorch is already imported (its objects would mix with minitensor's).
    """
    if is_installed():
        return
    if "torch" in sys.modules or "functorch" in sys.modules:
        raise RuntimeError(
            "minitensor.compat.install(): the real PyTorch is already imported in this process; "
            "call install() before any 'import torch' (restart the kernel in a notebook)"
        )
    sys.modules.update(build())
    sys.meta_path.insert(0, _finder)


def uninstall() -> None:
    """Undo ``install()``: forget every ``torch`` module it registered."""
    if not is_installed():
        return
    for name in [n for n in sys.modules if n in ("torch", "functorch") or n.startswith("torch.")]:
        del sys.modules[name]
    if _finder in sys.meta_path:
        sys.meta_path.remove(_finder)
