"""``mt.save`` / ``mt.load``: checkpoints as ``.npz`` files, never with pickle.

A checkpoint is an ordinary NumPy ``.npz`` archive (``np.savez``):

- every array of the saved object is one entry, ``arr_0``, ``arr_1``, ...;
- the entry ``__minitensor__`` holds a JSON text (as a NumPy string array)
  describing the object's structure: dicts (their key order and whether they
  were ``OrderedDict``), lists, tuples, numbers, strings, ``None``, and which
  entry each array is.

So a model's ``state_dict()`` (an OrderedDict of arrays) and an optimizer's
``state_dict()`` (nested dicts with int keys, lists, numbers and arrays) both
round-trip, and loading runs no code: the file is read with
``np.load(..., allow_pickle=False)`` and the JSON with ``json.loads``.

>>> mt.save(model.state_dict(), "model.npz")
>>> model.load_state_dict(mt.load("model.npz"))
>>> mt.save({"model": model.state_dict(), "optim": opt.state_dict(), "epoch": 3}, "ckpt")   # writes ckpt.npz
"""

from __future__ import annotations

import json
import os
import zipfile
from collections import OrderedDict

import numpy as np

from .tensor import Tensor

_MARKER = "__minitensor__"
_FORMAT = "minitensor-checkpoint"
_VERSION = 1


def save(obj, path: str | os.PathLike) -> str:
    """Write ``obj`` (a state dict, or nested dicts/lists/tuples of arrays and numbers) to ``path``.

    Args:
        obj: arrays, Tensors (saved as their arrays), numbers, strings, None,
            and dicts (str or int keys), lists and tuples of these.
        path: the file to write; ``.npz`` is appended when missing, as
            ``np.savez`` does (``"ckpt"`` and ``"ckpt.pt"`` become ``"ckpt.npz"``
            and ``"ckpt.pt.npz"``).  An existing file is replaced only once the
            new one is completely written.

    Returns:
        The path written.
    """
    path = _fspath(path, "save")
    if not path.endswith(".npz"):
        path += ".npz"
    arrays = {}
    tree = _encode(obj, arrays, "obj")
    header = json.dumps({"format": _FORMAT, "version": _VERSION, "tree": tree})
    arrays[_MARKER] = np.array(header)
    partial = path + ".partial"
    with open(partial, "wb") as f:
        np.savez(f, **arrays)
    os.replace(partial, path)
    return path


def load(path: str | os.PathLike):
    """Read a checkpoint written by ``mt.save``.

    Args:
        path: the file; when it does not exist and has no ``.npz`` suffix,
            ``path + ".npz"`` is read (so ``load("ckpt")`` finds what ``save(obj, "ckpt")`` wrote).

    Returns:
        The saved object, with NumPy arrays where arrays or Tensors were saved
        (a model state dict comes back as an OrderedDict of arrays).

    Raises:
        FileNotFoundError: no such file.
        ValueError: the file is not a minitensor checkpoint (corrupt, foreign
            or pickled data); the message names the path.
    """
    path = _fspath(path, "load")
    if not os.path.exists(path) and not path.endswith(".npz") and os.path.exists(path + ".npz"):
        path += ".npz"
    if not os.path.exists(path):
        raise FileNotFoundError(f"load: no such file: {path!r}")
    try:
        archive = np.load(path, allow_pickle=False)
    except ValueError:  # NumPy found neither a zip nor a .npy header, and refuses to unpickle
        raise ValueError(f"load: {path!r} is not a minitensor checkpoint: not an .npz archive") from None
    except (OSError, EOFError, zipfile.BadZipFile) as e:
        raise ValueError(f"load: {path!r} is not a minitensor checkpoint: unreadable ({e})") from None
    if not isinstance(archive, np.lib.npyio.NpzFile):
        raise ValueError(f"load: {path!r} holds a single .npy array, not a minitensor checkpoint (.npz)")
    with archive:
        if _MARKER not in archive.files:
            raise ValueError(f"load: {path!r} is an .npz archive without minitensor's {_MARKER!r} entry")
        try:
            header = json.loads(str(archive[_MARKER]))
            if not isinstance(header, dict) or header.get("format") != _FORMAT:
                raise ValueError("its header is not minitensor's")
            if header.get("version") != _VERSION:
                raise ValueError(f"format version {header.get('version')!r} is not supported (expected {_VERSION})")
            return _decode(header["tree"], archive)
        except (KeyError, ValueError, TypeError, OSError, EOFError, zipfile.BadZipFile) as e:
            raise ValueError(f"load: {path!r} is not a valid minitensor checkpoint: {e}") from None


def _fspath(path, fn: str) -> str:
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"{fn}: path must be a str or os.PathLike, got {type(path).__name__}")
    return os.fspath(path)


def _encode(obj, arrays: dict, where: str) -> dict:
    """The JSON description of ``obj``; its arrays are added to ``arrays`` as ``arr_<i>``."""
    if isinstance(obj, Tensor):
        obj = obj._data
    if isinstance(obj, (np.ndarray, np.generic)):
        array = np.asarray(obj)
        if array.dtype.hasobject:
            raise TypeError(f"save: {where} is an array of Python objects, which cannot be saved without pickle")
        name = f"arr_{len(arrays)}"
        arrays[name] = array
        return {"array": name}
    if obj is None or isinstance(obj, (bool, int, float, str)):
        return {"value": obj}
    if isinstance(obj, dict):
        items = []
        for key, value in obj.items():
            if isinstance(key, np.integer):
                key = int(key)
            if isinstance(key, bool) or not isinstance(key, (str, int)):
                raise TypeError(f"save: dict keys must be str or int, {where} has the key {key!r}")
            items.append([key, _encode(value, arrays, f"{where}[{key!r}]")])
        return {"odict" if isinstance(obj, OrderedDict) else "dict": items}
    if isinstance(obj, (list, tuple)):
        kind = "tuple" if isinstance(obj, tuple) else "list"
        return {kind: [_encode(v, arrays, f"{where}[{i}]") for i, v in enumerate(obj)]}
    raise TypeError(
        f"save: {where} has type {type(obj).__name__}; only arrays, Tensors, numbers, strings, None, "
        "dicts, lists and tuples can be saved"
    )


def _decode(node, archive):
    """The object described by one JSON node (the inverse of ``_encode``)."""
    if not isinstance(node, dict) or len(node) != 1:
        raise ValueError(f"malformed structure entry {node!r}")
    ((kind, content),) = node.items()
    if kind == "array":
        return archive[content]
    if kind == "value":
        return content
    if kind in ("list", "tuple"):
        items = [_decode(v, archive) for v in content]
        return tuple(items) if kind == "tuple" else items
    if kind in ("dict", "odict"):
        pairs = ((key, _decode(value, archive)) for key, value in content)
        return OrderedDict(pairs) if kind == "odict" else dict(pairs)
    raise ValueError(f"unknown structure entry kind {kind!r}")
