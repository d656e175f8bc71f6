"""The plain data between the grader and a student's process: what goes in comes out, nothing else gets in."""

from __future__ import annotations

import json
import pickle
import socket
import time

import numpy as np
import pytest

from minitensor.course.wire import ProtocolError, pack, receive, send, unpack


def test_plain_data_comes_back_as_it_went(rng) -> None:
    transposed = np.swapaxes(rng.standard_normal((2, 4, 3)), -1, -2)
    message = {"out": rng.standard_normal((2, 3)), "dims": (0, -1), "none": None, "flag": True, "text": "é",
               "grads": [[transposed, np.arange(3)]], "mask": np.eye(2, dtype=bool), "scalar": np.float64(2.5),
               "zero_d": np.asarray(1.5)}  # fmt: skip
    back = unpack(pack(message))
    assert back.keys() == message.keys() and back["dims"] == (0, -1) and back["scalar"] == 2.5
    for key in ("out", "mask", "zero_d"):
        assert back[key].dtype == message[key].dtype and np.array_equal(back[key], message[key])
    got = back["grads"][0][0]
    assert np.array_equal(got, transposed) and got.strides == transposed.strides  # (a transposed view again)
    assert got.flags.writeable


@pytest.mark.parametrize("value", [object(), np.array([object()]), {1: 2}, np.array(["text"]), lambda: 0])
def test_only_plain_data_is_sent(value) -> None:
    with pytest.raises(TypeError, match="cannot send"):
        pack({"x": value})


def _frame(header, blob: bytes = b"") -> bytes:
    text = json.dumps(header).encode()
    return len(text).to_bytes(4, "big") + text + blob


@pytest.mark.parametrize(
    "data",
    [
        pickle.dumps(np.arange(3)),  # a pickle is not a message
        _frame({"a": ["|O8", [1], False]}, b"\0" * 8),  # objects
        _frame({"a": ["<f8", [-1], False]}),  # a negative size
        _frame({"a": ["<f8", [4], False]}, b"\0" * 8),  # cut short
        _frame({"a": ["<f8", [1], False]}, b"\0" * 16),  # bytes left over
        _frame({"a": ["<f8", [3], True]}, b"\0" * 24),  # a 1-d array cannot be a transposed view
        _frame({"x": 1, "y": 2}),  # not a form this module writes
        _frame({"a": ["<f8", [2**40, 2**40], False]}),  # too big to be real
        b"\0\0\0\x05[[[[[",  # not JSON
        (2 * 10**5).to_bytes(4, "big") + b"[" * 10**5 + b"]" * 10**5,  # too deep
    ],
)
def test_anything_else_is_refused(data: bytes) -> None:
    with pytest.raises(ProtocolError):
        unpack(data)


def test_frames_over_a_socket_and_the_deadline() -> None:
    a, b = socket.socketpair()
    with a, b:
        send(a, {"x": np.ones(3)})
        assert np.array_equal(receive(b, time.monotonic() + 5)["x"], np.ones(3))
        start = time.monotonic()
        with pytest.raises(TimeoutError):
            receive(b, time.monotonic() + 0.1)
        assert time.monotonic() - start < 1
        a.sendall((2**40).to_bytes(8, "big"))
        with pytest.raises(ProtocolError, match="at most"):
            receive(b, time.monotonic() + 5)
        a.close()
        with pytest.raises(EOFError):
            receive(b, time.monotonic() + 5)
