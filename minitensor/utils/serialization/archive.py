"""The zip layout of a PyTorch checkpoint (what ``torch.save`` writes since PyTorch 1.6).

A checkpoint is an uncompressed zip archive whose records all sit in one folder::

    archive/data.pkl                 the object, as a pickle program (storages named by key)
    archive/.format_version          "1"
    archive/.storage_alignment       "64": each record's bytes start at a multiple of 64
    archive/byteorder                "little" (or "big": the storages' byte order)
    archive/data/0, archive/data/1   the raw bytes of each storage, in key order
    archive/version                  "3\\n"
    archive/.data/serialization_id   an identifier of this checkpoint (40 digits)

Records start at multiples of 64 bytes so a reader can map the file and use each storage in
place (``mt.load(f, mmap=True)``); the padding is an "extra field" of the local zip header, as
PyTorch's writer does.  ``ArchiveReader`` checks every entry before reading any: stored, as
PyTorch writes them (so no record holds more bytes than the file), not encrypted, within the
file; it reads a storage only into a buffer of its declared size, once that size is known to
be what the pickle asks for.
"""

from __future__ import annotations

import hashlib
import mmap as mmap_module
import os
import struct
import sys
import zipfile

import numpy as np

from .pickle_reader import CheckpointError

FOLDER = "archive"
ALIGNMENT = 64
_LOCAL_HEADER = 30  # bytes of a zip local file header before its name and extra field
_PADDING_FIELD = 0x4246  # the extra-field id PyTorch's writer pads with ("FB")


# ---------------------------------------------------------------- writing
def write_archive(file, pickle_bytes: bytes, storages: list, record_byteorder: bool = True) -> None:
    """Write a checkpoint to the binary ``file`` (open for writing, at its position).

    Args:
        pickle_bytes: the ``data.pkl`` program.
        storages: ``[(key, array), ...]``: each array (contiguous, native byte order) is the
            record ``data/<key>``.
        record_byteorder: write the ``byteorder`` record (readers assume "little" without it).
    """
    try:
        start = file.tell()
    except (AttributeError, OSError):  # a pipe: zipfile counts the bytes written from 0
        start = 0
    ident = hashlib.sha1(pickle_bytes)
    with zipfile.ZipFile(file, "w", zipfile.ZIP_STORED) as archive:

        def record(name: str, data) -> None:
            info = zipfile.ZipInfo(f"{FOLDER}/{name}")
            info.compress_type = zipfile.ZIP_STORED
            size = len(data)
            zip64 = size * 1.05 > zipfile.ZIP64_LIMIT  # zipfile then adds a 20-byte zip64 field
            header = _LOCAL_HEADER + len(info.filename.encode("utf-8")) + (20 if zip64 else 0) + 4
            pad = -(archive.fp.tell() - start + header) % ALIGNMENT
            info.extra = struct.pack("<HH", _PADDING_FIELD, pad) + b"Z" * pad
            archive.writestr(info, data)

        record("data.pkl", pickle_bytes)
        record(".format_version", b"1")
        record(".storage_alignment", str(ALIGNMENT).encode())
        if record_byteorder:
            record("byteorder", sys.byteorder.encode())
        for key, array in storages:
            data = memoryview(np.ascontiguousarray(array).reshape(-1).view(np.uint8))
            ident.update(f"{key}:{array.dtype}:{array.size};".encode())
            record(f"data/{key}", data)
        record("version", b"3\n")
        record(".data/serialization_id", str(int(ident.hexdigest(), 16))[:40].zfill(40).encode())


# ---------------------------------------------------------------- reading
class ArchiveReader:
    """The records of a zip archive, checked before any is read.

    Args:
        archive: an open ``zipfile.ZipFile``.
        size: the bytes of the file from the archive's start (the bound of every declared size).
        path: the file's path when it may be memory-mapped (``mmap=True``), else None.
    """

    def __init__(self, archive: zipfile.ZipFile, size: int, path: str | None = None) -> None:
        self.archive, self.path = archive, path
        self._map = None
        for info in archive.infolist():
            _check_entry(info, size)
        self.names = {info.filename: info for info in archive.infolist()}
        self.prefix = self._folder()

    def _folder(self) -> str | None:
        """The folder holding ``data.pkl`` (``archive/``, or the name torch.save gave it), or None."""
        folders = [name[: -len("data.pkl")] for name in self.names if name.endswith("/data.pkl")]
        folders = [f for f in folders if f.count("/") == 1]
        if len(folders) > 1:
            raise CheckpointError(f"it holds {len(folders)} data.pkl records ({', '.join(sorted(folders))})")
        return folders[0] if folders else None

    def has(self, name: str) -> bool:
        return self.prefix + name in self.names

    def read(self, name: str) -> bytes:
        """The bytes of a record (``data.pkl``, ``byteorder`` ...)."""
        info = self._info(name)
        return bytes(self._read_into(info, bytearray(info.file_size)))

    def storage(self, key: str, nbytes: int, mmap: bool) -> tuple:
        """``(buffer, offset)``: the ``nbytes`` bytes of storage ``data/<key>`` start at ``offset`` of the
        writable ``buffer`` (a bytearray; with ``mmap``, the file mapped copy-on-write: changes never
        reach the file)."""
        if not isinstance(key, str) or not key or "/" in key or len(key) > 100:
            raise CheckpointError(f"a storage is named {str(key)[:100]!r}, not a record key")
        info = self._info(f"data/{key}")
        if info.file_size != nbytes:
            raise CheckpointError(
                f"storage record {info.filename!r} holds {info.file_size} bytes, but its tensors' storage "
                f"needs {nbytes} bytes"
            )
        if not mmap:
            return self._read_into(info, bytearray(nbytes)), 0
        if self._map is None:
            with open(self.path, "rb") as file:
                self._map = mmap_module.mmap(file.fileno(), 0, access=mmap_module.ACCESS_COPY)
        start = self._data_offset(info)
        if start + nbytes > len(self._map):
            raise CheckpointError(f"record {info.filename!r} runs past the end of the file")
        return self._map, start

    def _info(self, name: str) -> zipfile.ZipInfo:
        info = self.names.get(self.prefix + name)
        if info is None:
            raise CheckpointError(f"it has no record {self.prefix + name!r}")
        return info

    def _read_into(self, info: zipfile.ZipInfo, buffer: bytearray) -> bytearray:
        """Fill ``buffer`` (exactly the record's declared size) from the record; zipfile checks the CRC."""
        view = memoryview(buffer)
        with self.archive.open(info) as fp:
            done = 0
            while done < len(buffer):
                n = fp.readinto(view[done:])
                if not n:
                    raise CheckpointError(f"record {info.filename!r} ends after {done} of {len(buffer)} bytes")
                done += n
            if fp.read(1):
                raise CheckpointError(f"record {info.filename!r} holds more than its declared {len(buffer)} bytes")
        return buffer

    def _data_offset(self, info: zipfile.ZipInfo) -> int:
        """Where the record's bytes start in the file: after its local header, name and extra field."""
        fp = self.archive.fp
        fp.seek(info.header_offset)
        header = fp.read(_LOCAL_HEADER)
        if len(header) != _LOCAL_HEADER or header[:4] != b"PK\x03\x04":
            raise CheckpointError(f"record {info.filename!r} has no local header at byte {info.header_offset}")
        name_length, extra_length = struct.unpack("<HH", header[26:30])
        return info.header_offset + _LOCAL_HEADER + name_length + extra_length


def _check_entry(info: zipfile.ZipInfo, size: int) -> None:
    """Refuse an entry whose reading could fail oddly or exhaust memory."""
    entry = repr(info.filename)
    if info.flag_bits & 0x1:
        raise CheckpointError(f"entry {entry} is encrypted")
    if info.compress_type != zipfile.ZIP_STORED:
        raise CheckpointError(
            f"entry {entry} is compressed (method {info.compress_type}); PyTorch's checkpoints store their records"
        )
    if info.file_size != info.compress_size or info.file_size > size:
        raise CheckpointError(
            f"entry {entry} declares {info.file_size} bytes ({info.compress_size} stored), "
            f"more than a file of {size} bytes can hold"
        )


def file_size(file) -> int:
    """The bytes from ``file``'s position to its end (its position is kept)."""
    start = file.tell()
    end = file.seek(0, os.SEEK_END)
    file.seek(start)
    return end - start
