"""``mt.load``: read PyTorch's checkpoints (and minitensor's earlier ``.npz`` files), running nothing.

A PyTorch checkpoint is a zip archive (``archive.py``) whose ``data.pkl`` is a pickle program.
``mt.load`` runs that program in its own interpreter (``pickle_reader.py``), which asks the
allowlist (``allowlist.py``) what each name means: PyTorch's ``weights_only=True`` allowlist,
answered with minitensor's objects.  ``pickle.load`` is never called and nothing the file names
is imported.  Whatever goes wrong with a file is a ``ValueError`` (also a
``pickle.UnpicklingError``, as PyTorch raises) whose message names the file.
"""

from __future__ import annotations

import io
import os
import struct
import zipfile
import zlib

from ...nn.module import Module
from .allowlist import Allowlist
from .archive import ArchiveReader, file_size
from .npz_format import MARKER, read_npz
from .pickle_reader import AllowlistUnpickler, CheckpointError
from .saving import MAX_DEPTH

_TORCH_LEGACY_MAGIC = b"\x80\x02\x8a\x0al\xfc\x9cF\xf9 j\xa8P\x19"  # PyTorch < 1.6: a bare pickle stream


def load(f, map_location=None, pickle_module=None, *, weights_only: bool | None = None, mmap: bool | None = None,
         **pickle_load_args):  # fmt: skip
    """Read a checkpoint written by ``torch.save`` or ``mt.save`` (or an earlier minitensor ``.npz``).

    Args:
        f: a path (str or os.PathLike), read exactly as given, or a binary file object open for
            reading (``open(p, "rb")``, ``io.BytesIO``), read from its position.
        map_location: as ``torch.load``'s; everything loads onto the CPU (also tensors saved on
            a GPU), so ``None``, ``"cpu"``, a CPU device, a dict and a callable change nothing.
            A location naming another device (``"cuda"``, ``"cuda:0"``, ``"mps"``) raises ValueError.
        pickle_module: must be None (minitensor never unpickles with a pickle module).
        weights_only: None or True (the default, PyTorch 2.13's): PyTorch's allowlist (tensors,
            containers, numbers, strings, ``torch.Size``) plus what ``mt.serialization.safe_globals``
            allows.  False also rebuilds ``nn.Module`` subclasses that are already imported (never
            anything else, and nothing is imported or run either way).
        mmap: True maps the file's storages instead of reading them (``f`` must be a path; the
            tensors are copy-on-write: changing them never changes the file).
        pickle_load_args: ``encoding`` only (how Python 2 strings are decoded, "utf-8" by default).

    Returns:
        The saved object: Tensors (NumPy arrays from an ``.npz`` file), bfloat16 tensors as float32,
        ``torch.Size`` as a tuple, containers of their saved types, allowed modules rebuilt.

    Raises:
        FileNotFoundError: no such file.
        ValueError: the file cannot be read safely (not a checkpoint, truncated, damaged, a name
            outside the allowlist, sizes it does not hold, nesting deeper than 100); the message
            names the file.  The error is also a ``pickle.UnpicklingError``.

    >>> model.load_state_dict(mt.load("model.pt"))
    >>> with mt.serialization.safe_globals([RNNModel, nn.LSTM, nn.Linear, nn.Embedding, nn.Dropout]):
    ...     model = mt.load("whole_model.pt")
    """
    _check_location(map_location)
    if pickle_module is not None:
        raise TypeError(f"load: pickle_module must be None (minitensor reads pickles itself), got {pickle_module!r}")
    for name, flag in (("weights_only", weights_only), ("mmap", mmap)):
        if flag is not None and not isinstance(flag, bool):
            raise TypeError(f"load: {name} must be None, True or False, got {flag!r}")
    unknown = set(pickle_load_args) - {"encoding"}
    if unknown:
        raise TypeError(f"load: unexpected keyword argument(s) {', '.join(sorted(unknown))} (only encoding)")
    encoding = pickle_load_args.get("encoding", "utf-8")
    if not isinstance(encoding, str):
        raise TypeError(f"load: encoding must be a str, got {type(encoding).__name__}")
    options = {"weights_only": weights_only is not False, "mmap": bool(mmap), "encoding": encoding}
    if isinstance(f, (str, os.PathLike)):
        path = os.fspath(f)
        if not os.path.isfile(path):
            hint = f" ({path + '.npz'!r} exists: older versions appended .npz)" if os.path.isfile(path + ".npz") else ""
            raise FileNotFoundError(f"load: no such file: {path!r}{hint}")
        with open(path, "rb") as file:
            return _load_file(file, path, path, options)
    if hasattr(f, "read"):
        if mmap:
            raise ValueError("load: f must be a file path in order to use the mmap argument")
        name = getattr(f, "name", None)
        name = name if isinstance(name, str) else f"<{type(f).__name__}>"
        if not (hasattr(f, "seekable") and f.seekable()):
            f = io.BytesIO(f.read())
        return _load_file(f, name, None, options)
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


def _load_file(file, name: str, path: str | None, options: dict):
    """The object in the open, seekable ``file`` (``name`` is for messages, ``path`` for mmap)."""
    start = file.tell()
    try:
        size = file_size(file)
        head = file.read(len(_TORCH_LEGACY_MAGIC))
        file.seek(start)
        if head.startswith(b"\x93NUMPY"):
            raise CheckpointError("it holds a single .npy array, not a checkpoint")
        if head == _TORCH_LEGACY_MAGIC:
            raise CheckpointError(
                "it is in PyTorch's format before version 1.6 (a bare pickle, not a zip archive), which minitensor "
                "does not read; load it in PyTorch and save it again with torch.save"
            )
        try:
            archive = zipfile.ZipFile(file)
        except zipfile.BadZipFile as e:
            raise CheckpointError(f"it is not a zip archive, as PyTorch's checkpoints are ({e})") from None
        with archive:
            names = archive.namelist()
            if MARKER + ".npy" in names:
                return read_npz(file, start, archive, size)
            reader = ArchiveReader(archive, size, path if options["mmap"] else None)
            if reader.prefix is None:
                if any(n.endswith("/constants.pkl") for n in names):
                    raise CheckpointError("it is a TorchScript archive (torch.jit.save), not a checkpoint")
                raise CheckpointError(
                    f"it is a zip archive without PyTorch's data.pkl or minitensor's {MARKER!r} entry"
                )
            return _load_torch(reader, options)
    except CheckpointError as e:
        raise CheckpointError(f"load: {name!r} cannot be loaded as a checkpoint: {e}") from None
    except RecursionError:  # a user class's own __setstate__, say
        raise CheckpointError(f"load: {name!r} cannot be loaded as a checkpoint: nested too deeply") from None
    except (zipfile.BadZipFile, zlib.error, EOFError, struct.error, OverflowError, KeyError, ValueError, TypeError,
            OSError, NotImplementedError, RuntimeError) as e:  # fmt: skip
        # zlib.error: a damaged deflate stream (.npz); NotImplementedError, RuntimeError: zipfile's unsupported
        # method and encryption (refused before reading already: a second line)
        raise CheckpointError(f"load: {name!r} cannot be loaded as a checkpoint: {type(e).__name__}: {e}") from None


def _load_torch(reader: ArchiveReader, options: dict):
    byteorder = "little"
    if reader.has("byteorder"):
        byteorder = reader.read("byteorder").decode("ascii", "replace")
        if byteorder not in ("little", "big"):
            raise CheckpointError(f"its byteorder record says {byteorder[:20]!r} (expected 'little' or 'big')")
    policy = Allowlist(reader, byteorder, options["mmap"], options["weights_only"])
    obj = AllowlistUnpickler(reader.read("data.pkl"), policy, options["encoding"]).load()
    check_nesting(obj)
    return obj


def check_nesting(obj, limit: int = MAX_DEPTH) -> None:
    """Refuse a loaded object nested deeper than ``limit`` containers or modules, or containing itself.

    A pickle may build any graph (its memo lets one list hold itself); this walk is iterative,
    visits each container once (a shared one is not walked again) and measures the longest path.
    """
    depth: dict = {}  # id -> nesting below and including this container, once walked
    walking: set = set()  # ids of the containers on the current path
    todo = [(obj, False)]
    while todo:
        node, leaving = todo.pop()
        children = _children(node)
        if children is None:
            continue
        key = id(node)
        if leaving:
            walking.discard(key)
            depth[key] = 1 + max((depth.get(id(c), 0) for c in children), default=0)
            if depth[key] > limit:
                raise CheckpointError(f"its object is nested deeper than {limit} levels")
        elif key in walking:
            raise CheckpointError(f"its object contains itself (a {type(node).__name__})")
        elif key not in depth:
            walking.add(key)
            todo.append((node, True))
            todo.extend((c, False) for c in children)


def _children(node):
    """The values a container (or module) holds, or None for anything else."""
    if isinstance(node, dict):
        return list(node.keys()) + list(node.values())
    if isinstance(node, (list, tuple, set, frozenset)):
        return list(node)
    if isinstance(node, Module):
        return list(node.__dict__.values())
    return None
