"""The pickle writer and the allowlist reader, against Python's own pickle: what the writer emits,
pickle.loads reads as the same value; what pickle.dumps (protocol 2) writes of plain data, the
reader reads as the same value; opcodes outside PyTorch's reader's set are refused."""

from __future__ import annotations

import math
import pickle
import pickletools
from collections import OrderedDict

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from minitensor.utils.serialization.allowlist import Allowlist
from minitensor.utils.serialization.pickle_reader import AllowlistUnpickler, CheckpointError
from minitensor.utils.serialization.pickle_writer import PickleWriter
from minitensor.utils.serialization.saving import _Writer

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**300), max_value=2**300),
    st.floats(allow_nan=False),
    st.text(max_size=20),
    st.binary(max_size=20),
)
keys = st.one_of(st.text(max_size=10), st.integers(-(2**40), 2**40))
values = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=5),
        st.tuples(inner) | st.tuples(inner, inner, inner, inner),
        st.dictionaries(keys, inner, max_size=5),
        st.dictionaries(keys, inner, max_size=5).map(OrderedDict),
    ),
    max_leaves=20,
)


def written(value) -> bytes:
    writer = _Writer()
    writer.value(value, "obj", 0)
    writer.pickle.stop()
    return bytes(writer.pickle.out)


def read(program: bytes):
    policy = Allowlist(archive=None, byteorder="little", mmap=False, weights_only=True)
    return AllowlistUnpickler(program, policy).load()


def same(a, b) -> bool:
    """Equal values of the same types, all the way down."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return list(a) == list(b) and all(same(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    return a == b or (isinstance(a, float) and math.isnan(a) and math.isnan(b))


@settings(max_examples=60)
@given(values)
def test_python_reads_what_the_writer_writes(value):
    program = written(value)
    assert same(pickle.loads(program), value)
    assert max(op.proto for op, _, _ in pickletools.genops(program)) <= 2  # protocol 2 opcodes only


@settings(max_examples=60)
@given(values)
def test_the_reader_reads_what_python_writes_at_protocol_2(value):
    assert same(read(written(value)), value)
    python = pickle.dumps(value, protocol=2)
    if b"c__builtin__\nbytes\n" in python:  # Python writes b"" as builtins.bytes(): PyTorch refuses it too
        with pytest.raises(CheckpointError, match="builtins.bytes"):
            read(python)
    else:
        assert same(read(python), value)


def test_integers_take_the_shortest_opcode():
    cases = {0: "BININT1", 255: "BININT1", 256: "BININT2", 65535: "BININT2", 65536: "BININT", -1: "BININT"}
    cases.update({2**31 - 1: "BININT", 2**31: "LONG1", -(2**31): "BININT", -(2**31) - 1: "LONG1"})
    for number, opcode in cases.items():
        writer = PickleWriter()
        writer.int(number)
        assert [op.name for op, _, _ in pickletools.genops(bytes(writer.out) + b".")] == [opcode, "STOP"]
        assert pickle.loads(bytes(writer.out) + b".") == number
    with pytest.raises(ValueError, match="255 bytes"):
        PickleWriter().int(2**2100)


def test_the_memo_brings_back_the_same_object():
    shared = [1, 2]
    loaded = read(written({"a": shared, "b": shared}))
    assert loaded["a"] is loaded["b"] and loaded["a"] == [1, 2]


@pytest.mark.parametrize(
    "opcode",
    [b"S'x'\n", b"I1\n", b"F1.0\n", b"V\n", b"\x8b\x01\x00\x00\x00\x01", b"\x93", b"\x94", b"\x95", b"i", b"o"],
    ids=["STRING", "INT", "FLOAT", "UNICODE", "LONG4", "STACK_GLOBAL", "MEMOIZE", "FRAME", "INST", "OBJ"],
)
def test_opcodes_outside_pytorchs_reader_are_refused(opcode):
    with pytest.raises(CheckpointError, match="not one a PyTorch checkpoint uses"):
        read(b"\x80\x02" + opcode + b".")
