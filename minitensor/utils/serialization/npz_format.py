"""minitensor's earlier checkpoint format (``.npz``), still read by ``mt.load``.

Before minitensor wrote PyTorch's format, ``mt.save`` wrote an ordinary NumPy ``.npz``
archive: every array was one entry (``arr_0``, ``arr_1`` ...) and the entry ``__minitensor__``
held a JSON text describing the object (dicts with their key order and whether they were
OrderedDicts, lists, tuples, numbers, strings, None, and which entry each array is).  Such
files load as they always did: arrays come back as NumPy arrays.

The archive is checked entry by entry (compression, encryption, sizes, each ``.npy`` header)
before anything is read, then read with ``np.load(..., allow_pickle=False)``.
"""

from __future__ import annotations

import json
import math
import zipfile
from collections import OrderedDict

import numpy as np

from .pickle_reader import CheckpointError

MARKER = "__minitensor__"
_FORMAT = "minitensor-checkpoint"
_VERSION = 1
_MAX_DEPTH = 100
_MAX_DEFLATE_RATIO = 1032  # deflate cannot expand n bytes to more than ~1032 n (zlib's technical note)
_SIMPLE = (bool, int, float, str, type(None))


def read_npz(file, start: int, archive: zipfile.ZipFile, size: int):
    """The object in an earlier minitensor checkpoint: ``archive`` is ``file`` opened as a zip from
    its position ``start``, ``size`` the bytes from there to the end."""
    for info in archive.infolist():
        _check_entry(archive, info, size)
    file.seek(start)
    with np.load(file, allow_pickle=False) as entries:
        marker = entries[MARKER]
        if marker.shape != () or marker.dtype.kind != "U":
            raise CheckpointError(f"its {MARKER!r} entry is not a JSON text")
        header = json.loads(str(marker))
        if not isinstance(header, dict) or header.get("format") != _FORMAT:
            raise CheckpointError("its header is not minitensor's")
        if header.get("version") != _VERSION:
            raise CheckpointError(f"format version {header.get('version')!r} is not supported (expected {_VERSION})")
        return _decode(header["tree"], entries, set(), 0)


def _check_entry(archive: zipfile.ZipFile, info: zipfile.ZipInfo, size: int) -> None:
    """Refuse an entry whose reading could fail oddly or exhaust memory: stored or deflated (what
    ``np.savez`` writes), not encrypted, sizes the file can hold, an ``.npy`` header whose array
    fills the entry exactly."""
    entry = repr(info.filename)
    if info.flag_bits & 0x1:
        raise CheckpointError(f"entry {entry} is encrypted")
    if info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
        raise CheckpointError(f"entry {entry} uses compression method {info.compress_type} (only stored or deflate)")
    ratio = 1 if info.compress_type == zipfile.ZIP_STORED else _MAX_DEFLATE_RATIO
    if info.compress_size > size or info.file_size > ratio * info.compress_size + 64:
        raise CheckpointError(
            f"entry {entry} declares {info.file_size} bytes ({info.compress_size} compressed), "
            f"more than a file of {size} bytes can hold"
        )
    with archive.open(info) as fp:
        version = np.lib.format.read_magic(fp)
        if version not in ((1, 0), (2, 0), (3, 0)):
            raise CheckpointError(f"entry {entry} has .npy format version {version}")
        # 2.0 and 3.0 share the header layout (3.0 allows UTF-8 field names)
        read_header = np.lib.format.read_array_header_1_0 if version == (1, 0) else np.lib.format.read_array_header_2_0
        shape, _, dtype = read_header(fp)
        if dtype.hasobject:
            raise CheckpointError(f"entry {entry} holds Python objects, which cannot be read without pickle")
        declared = math.prod(shape) * dtype.itemsize
        if declared != info.file_size - fp.tell():
            raise CheckpointError(
                f"entry {entry} declares an array of shape {shape} and dtype {dtype} ({declared} bytes), "
                f"but holds {info.file_size - fp.tell()} bytes"
            )


def _decode(node, entries, used: set, depth: int):
    """The object described by one JSON node."""
    if depth > _MAX_DEPTH:
        raise CheckpointError(f"its structure is nested deeper than {_MAX_DEPTH} levels")
    if not isinstance(node, dict) or len(node) != 1:
        raise CheckpointError(f"malformed structure entry {str(node)[:80]}")
    ((kind, content),) = node.items()
    if kind == "array":
        if not isinstance(content, str) or content in used:  # save never referred to an entry twice
            raise CheckpointError(f"array entry {content!r} is missing or referred to twice")
        used.add(content)
        return entries[content]
    if kind == "value" and isinstance(content, _SIMPLE):
        return content
    if kind in ("list", "tuple") and isinstance(content, list):
        items = [_decode(v, entries, used, depth + 1) for v in content]
        return tuple(items) if kind == "tuple" else items
    if kind in ("dict", "odict") and isinstance(content, list):
        pairs = []
        for pair in content:
            if not (isinstance(pair, list) and len(pair) == 2 and isinstance(pair[0], (str, int))):
                raise CheckpointError(f"malformed dict item {str(pair)[:80]}")
            pairs.append((pair[0], _decode(pair[1], entries, used, depth + 1)))
        return OrderedDict(pairs) if kind == "odict" else dict(pairs)
    raise CheckpointError(f"unknown structure entry kind {kind!r}")
