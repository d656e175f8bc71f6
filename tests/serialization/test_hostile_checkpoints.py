"""Hostile checkpoints: code-executing globals, truncated archives, storages shorter than their tensors,
absurd sizes, deep nesting, and a fuzz over mutated archives.  Each one is refused with a ValueError
(also a pickle.UnpicklingError) naming the file: nothing runs, nothing large is allocated, nothing
else is raised."""

from __future__ import annotations

import io
import os
import pickle
import struct
import time
import tracemalloc
import warnings
import zipfile
from collections import OrderedDict

import numpy as np
import pytest

import minitensor as mt
import minitensor.nn as nn
from minitensor import serialization
from minitensor.utils.serialization.archive import write_archive


def archive_of(program: bytes, storages: list = ()) -> bytes:
    """A checkpoint whose data.pkl is ``program`` (a pickle), with ``[(key, array)]`` storage records."""
    buffer = io.BytesIO()
    write_archive(buffer, program, list(storages))
    return buffer.getvalue()


def records_of(data: bytes) -> dict:
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        return {info.filename: archive.read(info) for info in archive.infolist()}


def rezip(records: dict) -> bytes:
    """A zip of ``{name: bytes}`` (stored), for archives whose records were changed."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, data in records.items():
            archive.writestr(name, data)
    return buffer.getvalue()


def refused(data: bytes, tmp_path, match: str | None = None, **options) -> str:
    """Load ``data`` from a file; it must raise a ValueError that is an UnpicklingError naming the file."""
    path = tmp_path / "hostile.pt"
    path.write_bytes(data)
    with pytest.raises(ValueError, match=match) as info:
        mt.load(path, **options)
    assert isinstance(info.value, pickle.UnpicklingError)
    assert str(path) in str(info.value), str(info.value)
    return str(info.value)


def tensor_program(numel: int, size: tuple, stride: tuple, offset: int = 0, storage: str = "FloatStorage") -> bytes:
    """data.pkl of one tensor: ``_rebuild_tensor_v2(('storage', torch.<storage>, '0', 'cpu', numel), ...)``."""

    def ints(values):
        return b"(" + b"".join(b"J" + struct.pack("<i", v) if v < 2**31 else _long(v) for v in values) + b"t"

    return (
        b"\x80\x02ctorch._utils\n_rebuild_tensor_v2\n((X\x07\x00\x00\x00storagectorch\n" + storage.encode()
        + b"\nX\x01\x00\x00\x000X\x03\x00\x00\x00cpu" + _long(numel) + b"tQ" + _long(offset) + ints(size)
        + ints(stride) + b"\x89ccollections\nOrderedDict\n)RtR."
    )  # fmt: skip


def _long(value: int) -> bytes:
    data = value.to_bytes(value.bit_length() // 8 + 1, "little", signed=True)
    return b"\x8a" + bytes([len(data)]) + data


def test_the_hand_made_tensor_program_is_a_valid_checkpoint(tmp_path):
    path = tmp_path / "ok.pt"
    path.write_bytes(archive_of(tensor_program(6, (2, 3), (3, 1)), [("0", np.arange(6, dtype=np.float32))]))
    assert mt.load(path).tolist() == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]


# ------------------------------------------------------------------ code in the file
class _Call:
    """Pickles as a call of ``func(*args)`` (what a malicious checkpoint holds)."""

    def __init__(self, func, *args):
        self.func, self.args = func, args

    def __reduce__(self):
        return self.func, self.args


def _payloads(target: str) -> dict:
    """name -> data.pkl programs that would create the directory ``target`` if they were run."""
    return {
        "os.mkdir": pickle.dumps(_Call(os.mkdir, target), protocol=2),
        "eval": pickle.dumps(_Call(eval, f"__import__('os').mkdir({target!r})"), protocol=2),
        "exec": pickle.dumps(_Call(exec, f"import os; os.mkdir({target!r})"), protocol=2),
        "getattr": pickle.dumps({"x": _Call(getattr, _Call(__import__, "os"), "mkdir")}, protocol=2),
        "__import__": pickle.dumps(_Call(__import__, "subprocess"), protocol=2),
        "protocol-4 STACK_GLOBAL": pickle.dumps(_Call(os.mkdir, target), protocol=4),
        "protocol-0 INST": b"(S'" + target.encode() + b"'\nios\nmkdir\n.",
        "OBJ": b"\x80\x02(cos\nmkdir\nX" + struct.pack("<I", len(target)) + target.encode() + b"o.",
        "a numpy array": pickle.dumps({"w": np.ones(2)}, protocol=2),
    }


@pytest.mark.parametrize("payload", list(_payloads("x")))
@pytest.mark.parametrize("weights_only", [True, False])
def test_code_in_a_file_is_never_run(payload, weights_only, tmp_path):
    target = str(tmp_path / "pwned")
    message = refused(archive_of(_payloads(target)[payload]), tmp_path, weights_only=weights_only)
    assert not os.path.exists(target)
    if "GLOBAL" in message and "blocked" not in message:
        assert "safe_globals" in message


def test_pytorch_refuses_the_same_payloads(tmp_path):
    torch = pytest.importorskip("torch")
    target = str(tmp_path / "pwned")
    for name, program in _payloads(target).items():
        with pytest.raises(pickle.UnpicklingError), warnings.catch_warnings():
            warnings.simplefilter("ignore")  # PyTorch's note on the protocol-4 payload
            torch.load(io.BytesIO(archive_of(program)), weights_only=True)
        assert not os.path.exists(target), name


def test_allowing_os_mkdir_does_not_run_it(tmp_path):
    target = str(tmp_path / "pwned")
    with serialization.safe_globals([os.mkdir]):
        refused(archive_of(_payloads(target)["os.mkdir"]), tmp_path, match="blocked")
    assert not os.path.exists(target)


def test_the_refusal_names_the_global_and_safe_globals(tmp_path):
    message = refused(archive_of(_payloads("x")["os.mkdir"]), tmp_path, match="posix.mkdir")
    assert "blocked" in message
    message = refused(archive_of(pickle.dumps(_Call(eval, "1"), protocol=2)), tmp_path, match="builtins.eval")
    assert "safe_globals([builtins.eval])" in message


# ------------------------------------------------------------------ damaged archives
def _good_checkpoint() -> bytes:
    mt.manual_seed(0)
    model = nn.Sequential(nn.Linear(3, 4), nn.LayerNorm(4))
    buffer = io.BytesIO()
    mt.save({"model": model.state_dict(), "step": 3, "views": [model[0].weight[1:], model[0].weight.t()]}, buffer)
    return buffer.getvalue()


def test_every_truncation_is_refused_naming_the_file(tmp_path):
    data = _good_checkpoint()
    for cut in range(0, len(data), max(1, len(data) // 150)):
        refused(data[:cut], tmp_path)


def test_a_storage_shorter_than_its_tensor_is_refused(tmp_path):
    data = archive_of(tensor_program(100, (100,), (1,)), [("0", np.zeros(10, np.float32))])
    refused(data, tmp_path, match="holds 40 bytes.*needs 400 bytes")
    torch = pytest.importorskip("torch")
    with pytest.raises(RuntimeError):  # where PyTorch raises a bare RuntimeError
        torch.load(io.BytesIO(data), weights_only=True)


@pytest.mark.parametrize(
    "size, stride, offset, match",
    [
        ((11,), (1,), 0, "reaches element 10 of a storage of 10"),
        ((3, 4), (4, 1), 0, "reaches element 11"),
        ((2,), (1,), 9, "reaches element 10"),
        ((2, 2), (-1, 1), 4, "stride.*not a non-negative int"),
        ((-2,), (1,), 0, "not a non-negative int"),
        ((2**62, 2**62), (0, 0), 0, "too big"),
    ],
)
def test_a_view_outside_its_storage_is_refused(size, stride, offset, match, tmp_path):
    data = archive_of(tensor_program(10, size, stride, offset), [("0", np.zeros(10, np.float32))])
    refused(data, tmp_path, match=match)


def test_absurd_sizes_are_refused_without_allocating_them(tmp_path):
    cases = {
        "storage of 2^60 floats": archive_of(tensor_program(2**60, (1,), (1,)), [("0", np.zeros(1, np.float32))]),
        "a string of 4 GB": archive_of(b"\x80\x02X\xff\xff\xff\xffabc."),
        "a zip entry of 4 GB": _declaring(rezip({"archive/data.pkl": b"\x80\x02N."}), 2**32 - 1),
        "a memo slot 4 billion": archive_of(b"\x80\x02Nr\xff\xff\xff\xffj\xff\xff\xff\xff."),
    }
    tracemalloc.start()
    try:
        for name, data in cases.items():
            refused(data, tmp_path) if name != "a memo slot 4 billion" else mt.load(io.BytesIO(data))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 20 * 2**20, f"peak {peak} bytes"


def _declaring(data: bytes, size: int) -> bytes:
    """``data`` (a zip of one entry) with the entry's sizes in the central directory set to ``size``."""
    data = bytearray(data)
    at = data.find(b"PK\x01\x02")
    data[at + 20 : at + 28] = struct.pack("<II", size, size)  # compressed and uncompressed size
    return bytes(data)


@pytest.mark.parametrize(
    "records, match",
    [
        ({"archive/data.pkl": b"\x80\x02N.", "other/data.pkl": b"\x80\x02N."}, "2 data.pkl"),
        ({"archive/constants.pkl": b"", "archive/code/x.py": b""}, "TorchScript"),
        ({"archive/version": b"3\n"}, "data.pkl"),
        ({"archive/data.pkl": b"\x80\x02N.", "archive/byteorder": b"middle"}, "byteorder"),
    ],
)
def test_archives_of_the_wrong_shape_are_refused(records, match, tmp_path):
    refused(rezip(records), tmp_path, match=match)


def test_compressed_and_encrypted_records_are_refused(tmp_path):
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("archive/data.pkl", b"\x80\x02N." * 100)
    refused(buffer.getvalue(), tmp_path, match="compressed")
    data = bytearray(rezip({"archive/data.pkl": b"\x80\x02N."}))
    for signature in (b"PK\x03\x04", b"PK\x01\x02"):  # set the encryption flag in both headers
        at = data.find(signature)
        flag = at + (6 if signature == b"PK\x03\x04" else 8)
        data[flag] |= 1
    refused(bytes(data), tmp_path, match="encrypted")


@pytest.mark.parametrize(
    "program, match",
    [
        (b"\x80\x02" + b"]" * 5000 + b"a" * 4999 + b".", "nested deeper than 100"),
        (b"\x80\x02" + b"(" * 5000 + b"N" + b"t" * 5000 + b".", "nested deeper than 100"),
        (b"\x80\x02]q\x00h\x00a.", "contains itself"),
        (b"\x80\x02}q\x00X\x01\x00\x00\x00ah\x00s.", "contains itself"),
        (b"\x80\x02a.", "stack is empty"),
        (b"\x80\x02N", "ends inside an opcode"),
        (b"\x80\x02h\x05.", "memo slot 5"),
        (b"\x80\x02Nt.", "needs a MARK"),
        (b"\x80\x02}]]s.", "not hashable"),
        (b"\x80\x02N]a.", "into a NoneType"),
        (b"\x80\x02\x95\x00\x00\x00\x00\x00\x00\x00\x00N.", "opcode b'\\\\x95'"),
        (b"\x80\x02ctorch._utils\n_rebuild_tensor_v2\n(NK\x00))tR.", "rebuilt from a NoneType"),
        (b"\x80\x02ctorch._utils\n_rebuild_qtensor\n.", "quantized tensors"),
        (b"\x80\x02(X\x07\x00\x00\x00storageNNNNtQ.", "a storage is described"),
        (b"\x80\x02X\x03\x00\x00\x00abcQ.", "outside data"),
    ],
    ids=[
        "5000-nested-lists",
        "5000-nested-tuples",
        "list-holding-itself",
        "dict-holding-itself",
        "empty-stack",
        "no-stop",
        "missing-memo",
        "no-mark",
        "unhashable-key",
        "append-to-none",
        "protocol-4-frame",
        "tensor-without-storage",
        "quantized",
        "bad-storage-id",
        "persistent-id-not-storage",
    ],
)
def test_malformed_programs_are_refused_saying_why(program, match, tmp_path):
    refused(archive_of(program), tmp_path, match=match)


def test_a_wide_shared_structure_is_walked_once(tmp_path):
    """Each level holds the level below twice: 2^60 paths, 60 containers; loading takes no time."""
    program = b"\x80\x02N" + b"q\x00h\x00\x86" * 60 + b"."
    start = time.perf_counter()
    loaded = mt.load(io.BytesIO(archive_of(program)))
    assert time.perf_counter() - start < 1.0
    assert loaded[0] is loaded[1]


# ------------------------------------------------------------------ fuzzing
def _fuzz_subject() -> bytes:
    values = {
        "model": nn.Sequential(nn.Linear(3, 4), nn.GELU()).state_dict(),
        "od": OrderedDict(a=1, b=[2.5, None, "x", (True, 2**70)]),
        "ints": mt.arange(6).reshape(2, 3)[:, 1:],
        "half": mt.ones(3, dtype=mt.float16),
    }
    buffer = io.BytesIO()
    mt.save(values, buffer)
    return buffer.getvalue()


def _mutants(data: bytes, rng: np.random.Generator, count: int):
    """Archives with flipped bytes anywhere, and valid archives whose data.pkl has flipped, deleted or
    repeated bytes (so the pickle interpreter, not the zip checksum, meets the damage)."""
    records = records_of(data)
    program = records["archive/data.pkl"]
    for i in range(count):
        if i % 3 == 0:
            mutant = bytearray(data)
            for at in rng.integers(0, len(mutant), rng.integers(1, 8)):
                mutant[at] = rng.integers(0, 256)
            yield bytes(mutant)
            continue
        mutant = bytearray(program)
        at = int(rng.integers(2, len(mutant)))
        kind = rng.integers(0, 3)
        if kind == 0:
            mutant[at] = rng.integers(0, 256)
        elif kind == 1:
            del mutant[at : at + int(rng.integers(1, 16))]
        else:
            mutant[at:at] = mutant[max(0, at - 16) : at]
        yield rezip({**records, "archive/data.pkl": bytes(mutant)})


def test_fuzzed_archives_load_or_raise_value_error(tmp_path):
    data = _fuzz_subject()
    rng = np.random.default_rng(2024)
    outcomes = {"loaded": 0, "refused": 0}
    deadline = time.perf_counter() + 4.0
    for mutant in _mutants(data, rng, 3000):
        try:
            mt.load(io.BytesIO(mutant))
            outcomes["loaded"] += 1
        except ValueError as e:  # anything else (IndexError, TypeError, MemoryError ...) fails the test
            assert isinstance(e, pickle.UnpicklingError) and "<BytesIO>" in str(e), repr(e)
            outcomes["refused"] += 1
        if time.perf_counter() > deadline:
            break
    assert outcomes["refused"] > 100 and outcomes["loaded"] > 10, outcomes  # the mutants reach both outcomes
