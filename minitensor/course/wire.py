"""Plain data between the grader and the process that runs a student's code: never a pickle.

What the child process sends is data to check, not code to run (unpickling it could
run anything), so a message holds only ``None``, bools, ints, floats, strings, lists,
tuples, dicts with string keys and NumPy arrays of bools or numbers.  A frame is 8
bytes of length, then a 4-byte header length, a JSON header, and each array's raw bytes::

    >>> unpack(pack({"x": np.arange(3.0), "dim": (0, 2)}))
    {'x': array([0., 1., 2.]), 'dim': (0, 2)}

An array whose data is a transposed view (last two dims swapped) arrives as one
again, so a student's function sees the same non-contiguous inputs as the parent made.
``unpack`` raises ``ProtocolError`` for anything else; ``receive`` gives up at a deadline.
"""

from __future__ import annotations

import json
import re
import socket
import time

import numpy as np

MAX_FRAME = 64 * 2**20  # bytes: more is not data a check asked for
_DTYPE = re.compile(r"[<>|][biuf][1248]")  # bools, ints and floats, no objects


class ProtocolError(ValueError):
    """A message that is not plain data as this module writes it."""


def _encode(obj, blobs: list):
    if obj is None or isinstance(obj, (bool, str)):
        return obj
    if isinstance(obj, (int, float, np.integer, np.floating, np.bool_)):
        return obj.item() if isinstance(obj, np.generic) else obj
    if isinstance(obj, np.ndarray):
        if obj.dtype.kind not in "biuf":
            raise TypeError(f"cannot send an array of dtype {obj.dtype}")
        transposed = obj.ndim >= 2 and not obj.flags.c_contiguous and np.swapaxes(obj, -1, -2).flags.c_contiguous
        blobs.append(np.ascontiguousarray(np.swapaxes(obj, -1, -2) if transposed else obj).tobytes())
        return {"a": [obj.dtype.str, list(obj.shape), transposed]}
    if isinstance(obj, (list, tuple)):
        items = [_encode(x, blobs) for x in obj]
        return items if isinstance(obj, list) else {"t": items}
    if isinstance(obj, dict) and all(isinstance(k, str) for k in obj):
        return {"d": {k: _encode(v, blobs) for k, v in obj.items()}}
    raise TypeError(f"cannot send a {type(obj).__name__}")


def pack(obj) -> bytes:
    """``obj`` as bytes (``TypeError`` for anything but plain data)."""
    blobs: list = []
    header = json.dumps(_encode(obj, blobs)).encode()
    return len(header).to_bytes(4, "big") + header + b"".join(blobs)


def _decode(node, data: memoryview, offset: list):
    if node is None or isinstance(node, (bool, int, float, str)):
        return node
    if isinstance(node, list):
        return [_decode(x, data, offset) for x in node]
    if not isinstance(node, dict) or len(node) != 1:
        raise ProtocolError("not a message of plain data")
    ((kind, value),) = node.items()
    if kind == "t" and isinstance(value, list):
        return tuple(_decode(x, data, offset) for x in value)
    if kind == "d" and isinstance(value, dict):
        return {k: _decode(v, data, offset) for k, v in value.items()}
    if kind != "a" or not isinstance(value, list) or len(value) != 3:
        raise ProtocolError("not a message of plain data")
    dtype, shape, transposed = value
    if not (isinstance(dtype, str) and _DTYPE.fullmatch(dtype) and isinstance(shape, list)
            and all(isinstance(s, int) and not isinstance(s, bool) and 0 <= s <= MAX_FRAME for s in shape)
            and isinstance(transposed, bool) and (len(shape) >= 2 or not transposed)):  # fmt: skip
        raise ProtocolError(f"not an array: {value!r:.100}")
    stored = shape[:-2] + shape[-2:][::-1] if transposed else shape
    size = np.dtype(dtype).itemsize * int(np.prod(stored, dtype=np.float64))
    if offset[0] + size > len(data):
        raise ProtocolError("an array's data is cut short")
    array = np.frombuffer(data[offset[0] : offset[0] + size], dtype=dtype).reshape(stored).copy()
    offset[0] += size
    return np.swapaxes(array, -1, -2) if transposed else array


def unpack(data: bytes):
    """The object ``pack`` wrote (``ProtocolError`` for anything else)."""
    try:
        length = int.from_bytes(data[:4], "big")
        node = json.loads(data[4 : 4 + length].decode())
        offset = [4 + length]
        obj = _decode(node, memoryview(data), offset)
    except ProtocolError:
        raise
    except (ValueError, TypeError, RecursionError, OverflowError, UnicodeDecodeError) as error:
        raise ProtocolError(f"not a message of plain data ({type(error).__name__})") from None
    if offset[0] != len(data):
        raise ProtocolError("bytes left over after the message")
    return obj


def send(sock: socket.socket, obj, deadline: float | None = None) -> None:
    """Write ``obj`` as one frame; ``TimeoutError`` when the other end has not read it by ``deadline``."""
    payload = pack(obj)
    sock.settimeout(None if deadline is None else max(deadline - time.monotonic(), 1e-3))
    sock.sendall(len(payload).to_bytes(8, "big") + payload)


def _read(sock: socket.socket, n: int, deadline: float | None) -> bytes:
    chunks, left = [], n
    while left:
        sock.settimeout(None if deadline is None else max(deadline - time.monotonic(), 1e-3))
        chunk = sock.recv(min(left, 2**20))
        if not chunk:
            raise EOFError("the other end closed the connection")
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def receive(sock: socket.socket, deadline: float | None = None):
    """The next frame's object; ``TimeoutError`` at ``deadline`` (``time.monotonic()``), ``EOFError`` on close."""
    n = int.from_bytes(_read(sock, 8, deadline), "big")
    if n > MAX_FRAME:
        raise ProtocolError(f"a message of {n} bytes (at most {MAX_FRAME})")
    return unpack(_read(sock, n, deadline))
