"""``mt.save`` / ``mt.load``: checkpoints as ``.npz`` archives, never with pickle.

A checkpoint is an ordinary NumPy ``.npz`` archive (``np.savez``), written to
exactly the path (or open binary file) given, whatever its suffix:

- every array of the saved object is one entry, ``arr_0``, ``arr_1``, ...;
- the entry ``__minitensor__`` holds a JSON text (as a NumPy string array)
  describing the object's structure: dicts (their key order and whether they
  were ``OrderedDict``), lists, tuples, numbers, strings, ``None``, and which
  entry each array is.

So a model's ``state_dict()`` (an OrderedDict of Tensors, saved as their
arrays) and an optimizer's ``state_dict()`` (nested dicts with int keys, lists,
numbers and arrays) both round-trip, and loading runs no code: the archive is
checked entry by entry (sizes, compression, nesting) before anything is read,
then read with ``np.load(..., allow_pickle=False)`` and the JSON with ``json.loads``.
A Module or an optimizer itself cannot be saved: save its ``state_dict()``.

>>> mt.save(model.state_dict(), "model.pt")
>>> model.load_state_dict(mt.load("model.pt"))
>>> mt.save({"model": model.state_dict(), "optim": opt.state_dict(), "epoch": 3}, "ckpt.npz")
"""

from __future__ import annotations

import io
import json
import math
import os
import zipfile
import zlib
from collections import OrderedDict

import numpy as np

from .tensor import Tensor

_MARKER = "__minitensor__"
_FORMAT = "minitensor-checkpoint"
_VERSION = 1
_MAX_DEPTH = 100  # nesting of dicts/lists/tuples, on save and on load (deeper is refused, never recursed into)
_MAX_DEFLATE_RATIO = 1032  # deflate cannot expand n bytes to more than ~1032 n (zlib's technical note)
_SIMPLE = (bool, int, float, str, type(None))


def save(obj, f) -> str | None:
    """Write ``obj`` (a state dict, or nested dicts/lists/tuples of arrays and numbers) to ``f``.

    Args:
        obj: arrays, Tensors (saved as their arrays), numbers, strings, None,
            and dicts (str or int keys), lists and tuples of these, nested at
            most 100 deep.  Anything else (a Module, an optimizer, a function)
            raises ``TypeError``: save its ``state_dict()`` instead.
        f: a path (str or os.PathLike), written exactly as given (no suffix is
            added; an existing file is replaced only once the new one is
            completely written), or a binary file object open for writing
            (``open(p, "wb")``, ``io.BytesIO()``), written at its position.

    Returns:
        The path written, or None when ``f`` is a file object.
    """
    if not (isinstance(f, (str, os.PathLike)) or hasattr(f, "write")):
        raise TypeError(f"save: f must be a path (str or os.PathLike) or a binary file object, got {type(f).__name__}")
    arrays = {}
    tree = _encode(obj, arrays, "obj", 0)
    header = json.dumps({"format": _FORMAT, "version": _VERSION, "tree": tree})
    arrays[_MARKER] = np.array(header)
    if hasattr(f, "write"):
        np.savez(f, **arrays)
        return None
    path = os.fspath(f)
    partial = path + ".partial"
    with open(partial, "wb") as out:
        np.savez(out, **arrays)
    os.replace(partial, path)
    return path


def load(f, map_location=None, weights_only: bool | None = None, mmap: bool | None = None):
    """Read a checkpoint written by ``mt.save``.

    Args:
        f: a path (str or os.PathLike), read exactly as given, or a binary
            file object open for reading (``open(p, "rb")``, ``io.BytesIO``).
        map_location: accepted for code written for ``torch.load``; everything
            is on the CPU, so ``None``, ``"cpu"``, a device whose ``.type`` is
            ``"cpu"``, a dict mapping locations to ``"cpu"`` and a callable
            change nothing.  A location naming another device (``"cuda"``,
            ``"cuda:0"``, ``"mps"``) raises ``ValueError``.
        weights_only: accepted and ignored (None, True or False): nothing is
            ever unpickled, so every load is weights-only.
        mmap: accepted and ignored (None, True or False): the arrays are read
            into memory.

    Returns:
        The saved object, with NumPy arrays where arrays or Tensors were saved
        (a model state dict comes back as an OrderedDict of arrays, which
        ``load_state_dict`` accepts).

    Raises:
        FileNotFoundError: no such file.
        ValueError: the file is not a minitensor checkpoint (corrupt, truncated,
            foreign, pickled, or hostile: encrypted or unknown compression,
            sizes larger than the file, nesting deeper than 100); the message
            names the path.
    """
    _check_location(map_location)
    for name, flag in (("weights_only", weights_only), ("mmap", mmap)):
        if flag is not None and not isinstance(flag, bool):
            raise TypeError(f"load: {name} must be None, True or False, got {flag!r}")
    if isinstance(f, (str, os.PathLike)):
        path = os.fspath(f)
        if not os.path.isfile(path):
            hint = f" ({path + '.npz'!r} exists: older versions appended .npz)" if os.path.isfile(path + ".npz") else ""
            raise FileNotFoundError(f"load: no such file: {path!r}{hint}")
        with open(path, "rb") as file:
            return _load_archive(file, path)
    if hasattr(f, "read"):
        name = getattr(f, "name", None)
        name = name if isinstance(name, str) else f"<{type(f).__name__}>"
        if not (hasattr(f, "seekable") and f.seekable()):
            f = io.BytesIO(f.read())
        return _load_archive(f, name)
    raise TypeError(f"load: f must be a path (str or os.PathLike) or a binary file object, got {type(f).__name__}")


def _check_location(map_location) -> None:
    """Accept every ``map_location`` that keeps tensors on the CPU; refuse one naming another device."""
    if map_location is None or callable(map_location):
        return
    locations = map_location.values() if isinstance(map_location, dict) else [map_location]
    for location in locations:
        device = getattr(location, "type", location)  # torch.device("cpu").type == "cpu"
        if not isinstance(device, str):
            raise TypeError(
                f"load: map_location must be None, a device name, a dict or a callable, got {type(location).__name__}"
            )
        if device.split(":")[0] != "cpu":
            raise ValueError(f"load: map_location names the device {device!r}; minitensor runs on the CPU only ('cpu')")


# ---------------------------------------------------------------- reading
def _load_archive(file, name: str):
    """The object in the open, seekable checkpoint ``file`` (``name`` is for messages)."""
    start = file.tell()
    try:
        size = file.seek(0, os.SEEK_END) - start
        file.seek(start)
        if file.read(6) == b"\x93NUMPY":
            raise ValueError("it holds a single .npy array, not an .npz archive")
        file.seek(start)
        with zipfile.ZipFile(file) as zf:
            _check_entries(zf, size)
        file.seek(start)
        with np.load(file, allow_pickle=False) as archive:
            if _MARKER not in archive.files:
                raise ValueError(f"it is an .npz archive without minitensor's {_MARKER!r} entry")
            marker = archive[_MARKER]
            if marker.shape != () or marker.dtype.kind != "U":
                raise ValueError(f"its {_MARKER!r} entry is not a JSON text")
            header = json.loads(str(marker))
            if not isinstance(header, dict) or header.get("format") != _FORMAT:
                raise ValueError("its header is not minitensor's")
            if header.get("version") != _VERSION:
                raise ValueError(f"format version {header.get('version')!r} is not supported (expected {_VERSION})")
            return _decode(header["tree"], archive, set(), 0)
    except RecursionError:
        raise ValueError(f"load: {name!r} is not a valid minitensor checkpoint: nested too deeply") from None
    except zipfile.BadZipFile as e:
        raise ValueError(f"load: {name!r} is not a minitensor checkpoint: not an .npz (zip) archive ({e})") from None
    except (KeyError, ValueError, TypeError, OSError, EOFError, zlib.error, NotImplementedError, RuntimeError) as e:
        # zlib.error: a damaged deflate stream; NotImplementedError, RuntimeError: zipfile's
        # unsupported method and encryption (refused above already; kept as a second line)
        raise ValueError(f"load: {name!r} is not a valid minitensor checkpoint: {e}") from None


def _check_entries(zf: zipfile.ZipFile, size: int) -> None:
    """Refuse any entry whose reading could fail oddly or exhaust memory, before reading any.

    Each entry must be stored or deflated (what ``np.savez`` writes), not encrypted,
    with sizes the file can hold, and an ``.npy`` header whose array fills the entry exactly.
    """
    for info in zf.infolist():
        entry = repr(info.filename)
        if info.flag_bits & 0x1:
            raise ValueError(f"entry {entry} is encrypted")
        if info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
            raise ValueError(f"entry {entry} uses compression method {info.compress_type} (only stored or deflate)")
        ratio = 1 if info.compress_type == zipfile.ZIP_STORED else _MAX_DEFLATE_RATIO
        if info.compress_size > size or info.file_size > ratio * info.compress_size + 64:
            raise ValueError(
                f"entry {entry} declares {info.file_size} bytes ({info.compress_size} compressed), "
                f"more than a file of {size} bytes can hold"
            )
        with zf.open(info) as fp:
            version = np.lib.format.read_magic(fp)
            if version not in ((1, 0), (2, 0), (3, 0)):
                raise ValueError(f"entry {entry} has .npy format version {version}")
            # 2.0 and 3.0 share the header layout (3.0 allows UTF-8 field names)
            read_header = (
                np.lib.format.read_array_header_1_0 if version == (1, 0) else np.lib.format.read_array_header_2_0
            )
            shape, _, dtype = read_header(fp)
            if dtype.hasobject:
                raise ValueError(f"entry {entry} holds Python objects, which cannot be read without pickle")
            declared = math.prod(shape) * dtype.itemsize
            if declared != info.file_size - fp.tell():
                raise ValueError(
                    f"entry {entry} declares an array of shape {shape} and dtype {dtype} ({declared} bytes), "
                    f"but holds {info.file_size - fp.tell()} bytes"
                )


def _decode(node, archive, used: set, depth: int):
    """The object described by one JSON node (the inverse of ``_encode``)."""
    if depth > _MAX_DEPTH:
        raise ValueError(f"its structure is nested deeper than {_MAX_DEPTH} levels")
    if not isinstance(node, dict) or len(node) != 1:
        raise ValueError(f"malformed structure entry {str(node)[:80]}")
    ((kind, content),) = node.items()
    if kind == "array":
        if not isinstance(content, str) or content in used:  # save never refers to an entry twice
            raise ValueError(f"array entry {content!r} is missing or referred to twice")
        used.add(content)
        return archive[content]
    if kind == "value" and isinstance(content, _SIMPLE):
        return content
    if kind in ("list", "tuple") and isinstance(content, list):
        items = [_decode(v, archive, used, depth + 1) for v in content]
        return tuple(items) if kind == "tuple" else items
    if kind in ("dict", "odict") and isinstance(content, list):
        pairs = []
        for pair in content:
            if not (isinstance(pair, list) and len(pair) == 2 and isinstance(pair[0], (str, int))):
                raise ValueError(f"malformed dict item {str(pair)[:80]}")
            pairs.append((pair[0], _decode(pair[1], archive, used, depth + 1)))
        return OrderedDict(pairs) if kind == "odict" else dict(pairs)
    raise ValueError(f"unknown structure entry kind {kind!r}")


# ---------------------------------------------------------------- writing
def _encode(obj, arrays: dict, where: str, depth: int) -> dict:
    """The JSON description of ``obj``; its arrays are added to ``arrays`` as ``arr_<i>``."""
    if depth > _MAX_DEPTH:
        raise ValueError(f"save: {where} is nested deeper than {_MAX_DEPTH} levels (or contains itself)")
    if isinstance(obj, Tensor):
        obj = obj._data
    if isinstance(obj, (np.ndarray, np.generic)):
        array = np.asarray(obj)
        if array.dtype.hasobject:
            raise TypeError(f"save: {where} is an array of Python objects, which cannot be saved without pickle")
        name = f"arr_{len(arrays)}"
        arrays[name] = array
        return {"array": name}
    if isinstance(obj, _SIMPLE):
        return {"value": obj}
    if isinstance(obj, dict):
        items = []
        for key, value in obj.items():
            if isinstance(key, np.integer):
                key = int(key)
            if isinstance(key, bool) or not isinstance(key, (str, int)):
                raise TypeError(f"save: dict keys must be str or int, {where} has the key {key!r}")
            items.append([key, _encode(value, arrays, f"{where}[{key!r}]", depth + 1)])
        return {"odict" if isinstance(obj, OrderedDict) else "dict": items}
    if isinstance(obj, (list, tuple)):
        kind = "tuple" if isinstance(obj, tuple) else "list"
        return {kind: [_encode(v, arrays, f"{where}[{i}]", depth + 1) for i, v in enumerate(obj)]}
    if callable(getattr(obj, "state_dict", None)):
        kind = type(obj).__name__
        raise TypeError(
            f"save: {where} is a {kind}, which cannot be saved as an object (minitensor never pickles); save its "
            f"state_dict() and load that into a new {kind}: "
            "mt.save(m.state_dict(), f), then m.load_state_dict(mt.load(f))"
        )
    raise TypeError(
        f"save: {where} has type {type(obj).__name__}; only arrays, Tensors, numbers, strings, None, "
        "dicts, lists and tuples can be saved (no pickle); for a model or optimizer, save its state_dict()"
    )
