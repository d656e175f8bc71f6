"""minitensor's earlier checkpoints (``.npz`` archives with a ``__minitensor__`` JSON entry) still load,
as they always did (arrays as NumPy arrays); foreign and hostile ``.npz`` files are refused."""

from __future__ import annotations

import bz2
import io
import json
import pickle
import struct
import zlib
from collections import OrderedDict
from pathlib import Path

import numpy as np
import pytest

import minitensor as mt
import minitensor.nn as nn
from minitensor import optim

# Written by minitensor's earlier mt.save: {"model": a Sequential's state_dict, "optimizer": Adam's after
# two steps, "step": 2, "note": str, "shape": (5, 3), "flags": [True, None]}.
OLD_FILE = Path(__file__).parent / "fixtures" / "old_format_checkpoint.npz"


def _old_model():
    return nn.Sequential(nn.Linear(3, 4), nn.LayerNorm(4), nn.ReLU(), nn.Linear(4, 2))


def test_an_earlier_checkpoint_loads_as_before():
    checkpoint = mt.load(OLD_FILE)
    assert list(checkpoint) == ["model", "optimizer", "step", "note", "shape", "flags"]
    assert checkpoint["step"] == 2 and checkpoint["note"] == "written by minitensor 0.x"
    assert checkpoint["shape"] == (5, 3) and checkpoint["flags"] == [True, None]
    state = checkpoint["model"]
    assert type(state) is OrderedDict and list(state) == list(_old_model().state_dict())
    assert all(type(v) is np.ndarray and v.dtype == np.float32 for v in state.values())
    assert list(checkpoint["optimizer"]["state"]) == [0, 1, 2, 3, 4, 5]
    assert checkpoint["optimizer"]["state"][0]["step"] == 2
    assert checkpoint["optimizer"]["param_groups"][0]["betas"] == (0.9, 0.999)


def test_an_earlier_checkpoint_restores_a_model_and_its_optimizer():
    checkpoint = mt.load(OLD_FILE)
    model = _old_model()
    model.load_state_dict(checkpoint["model"])
    np.testing.assert_array_equal(model[0].weight.numpy(), checkpoint["model"]["0.weight"])
    opt = optim.Adam(model.parameters(), lr=0.5)
    opt.load_state_dict(checkpoint["optimizer"])
    first = next(iter(model.parameters()))
    assert opt.param_groups[0]["lr"] == 0.01 and opt.state[first]["step"] == 2  # (state is keyed by parameter)


def test_an_earlier_checkpoint_saved_again_is_pytorchs_format(tmp_path):
    checkpoint = mt.load(OLD_FILE)
    again = mt.load(mt.save(checkpoint, tmp_path / "new.pt"))
    assert again["shape"] == (5, 3)
    for key, value in checkpoint["model"].items():
        assert type(again["model"][key]) is mt.Tensor
        np.testing.assert_array_equal(again["model"][key].numpy(), value)


# ------------------------------------------------------------ foreign files
def _write(path, data: bytes):
    with open(path, "wb") as f:
        f.write(data)
    return path


def _foreign_files(tmp_path):
    good_bytes = OLD_FILE.read_bytes()
    arrays_only = tmp_path / "plain.npz"
    np.savez(arrays_only, w=np.ones(3))
    npy = tmp_path / "array.npy"
    np.save(npy, np.ones(3))
    pickled = _write(tmp_path / "pickled.npz", pickle.dumps({"w": np.ones(3)}))
    with_objects = tmp_path / "objects.npz"
    header = json.dumps({"format": "minitensor-checkpoint", "version": 1, "tree": {"array": "arr_0"}})
    np.savez(with_objects, __minitensor__=np.array(header), arr_0=np.array([{"x": 1}], dtype=object))
    other_version = tmp_path / "v99.npz"
    np.savez(other_version, __minitensor__=np.array(json.dumps({"format": "minitensor-checkpoint", "version": 99})))
    bad_tree = tmp_path / "tree.npz"
    header = json.dumps({"format": "minitensor-checkpoint", "version": 1, "tree": {"array": "arr_7"}})
    np.savez(bad_tree, __minitensor__=np.array(header))
    not_json = tmp_path / "notjson.npz"
    np.savez(not_json, __minitensor__=np.array("{not json"))
    return [
        _write(tmp_path / "random.npz", np.random.default_rng(0).bytes(512)),
        _write(tmp_path / "empty.npz", b""),
        _write(tmp_path / "truncated.npz", good_bytes[: len(good_bytes) // 2]),
        arrays_only,
        npy,
        pickled,
        with_objects,
        other_version,
        bad_tree,
        not_json,
    ]


def test_corrupt_or_foreign_files_raise_value_error_naming_the_path(tmp_path):
    for path in _foreign_files(tmp_path):
        with pytest.raises(ValueError) as info:
            mt.load(path)
        assert str(path) in str(info.value), str(info.value)


def test_load_never_allows_pickle(tmp_path, monkeypatch):
    calls = []
    real_load = np.load

    def recording_load(*args, **kwargs):
        calls.append(kwargs.get("allow_pickle"))
        return real_load(*args, **kwargs)

    monkeypatch.setattr(np, "load", recording_load)
    mt.load(OLD_FILE)
    for path in _foreign_files(tmp_path):
        with pytest.raises(ValueError):
            mt.load(path)
    assert calls and all(flag is False for flag in calls)


# ------------------------------------------------------ hostile archives, by hand
def _npy(array: np.ndarray) -> bytes:
    out = io.BytesIO()
    np.save(out, array, allow_pickle=False)
    return out.getvalue()


def _npy_header(shape: tuple, descr: str = "<f8") -> bytes:
    """An .npy version 1.0 header declaring ``shape`` (no data)."""
    text = repr({"descr": descr, "fortran_order": False, "shape": shape}) + " "
    text += " " * (-(10 + len(text) + 1) % 64) + "\n"
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(text)) + text.encode("latin1")


def _marker(tree: str) -> bytes:
    return _npy(np.array('{"format": "minitensor-checkpoint", "version": 1, "tree": ' + tree + "}"))


def _zip(entries: list) -> bytes:
    """A zip archive written field by field.  Each entry is a dict: name, data (the stored bytes),
    and optionally method, flags, crc and size (the declared uncompressed size)."""
    local, central = b"", b""
    for e in entries:
        name, data = e["name"].encode(), e["data"]
        method, flags, crc, size = e.get("method", 0), e.get("flags", 0), e.get("crc", 0), e.get("size", len(data))
        fields = (flags, method, 0, 0, crc, len(data), size, len(name))
        central += struct.pack("<IHH", 0x02014B50, 20, 20) + struct.pack("<HHHHIIIH", *fields)
        central += struct.pack("<HHHHII", 0, 0, 0, 0, 0, len(local)) + name
        local += struct.pack("<IH", 0x04034B50, 20) + struct.pack("<HHHHIIIH", *fields) + struct.pack("<H", 0)
        local += name + data
    end = struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, len(entries), len(entries), len(central), len(local), 0)
    return local + central + end


def _stored(name: str, data: bytes, **extra) -> dict:
    return {"name": name, "data": data, "crc": zlib.crc32(data), **extra}


def _deflated(name: str, data: bytes) -> dict:
    packer = zlib.compressobj(9, zlib.DEFLATED, -15)
    compressed = packer.compress(data) + packer.flush()
    return {"name": name, "data": compressed, "method": 8, "crc": zlib.crc32(data), "size": len(data)}


def _hostile_archives() -> dict:
    """name -> bytes of an .npz file that a reader must refuse (each one is read by the .npz reader)."""
    marker = _stored("__minitensor__.npy", _marker('{"array": "arr_0"}'))
    damaged = _deflated("arr_0.npy", _npy(np.zeros(1000)))
    damaged["data"] = b"\x07" + damaged["data"][1:]  # BFINAL=1, BTYPE=11: a reserved block type
    huge = _stored("arr_0.npy", _npy_header((10**14,)) + bytes(8))  # 10^14 float64 declared, 8 bytes there
    deep = '{"list": [' * 5000 + '{"value": 1}' + "]}" * 5000
    return {
        "sanity": _zip([marker, _stored("arr_0.npy", _npy(np.arange(3.0)))]),
        "damaged-deflate": _zip([marker, damaged]),
        "unknown-method": _zip([marker, _stored("arr_0.npy", _npy(np.ones(2)), method=99)]),
        "bzip2": _zip(
            [marker, {**_stored("arr_0.npy", _npy(np.ones(2))), "data": bz2.compress(_npy(np.ones(2))), "method": 12}]
        ),
        "encrypted": _zip([marker, _stored("arr_0.npy", _npy(np.ones(2)), flags=1)]),
        "deep-json": _zip([_stored("__minitensor__.npy", _marker(deep))]),
        "huge-array": _zip([marker, huge]),
        "huge-entry": _zip([marker, _stored("arr_0.npy", _npy(np.ones(2)), size=10**9)]),
        "twice-referred": _zip(
            [
                _stored("__minitensor__.npy", _marker('{"list": [{"array": "arr_0"}, {"array": "arr_0"}]}')),
                _stored("arr_0.npy", _npy(np.ones(2))),
            ]
        ),  # fmt: skip
    }


def test_the_hand_written_archive_is_a_valid_checkpoint(tmp_path):
    path = _write(tmp_path / "sanity.pt", _hostile_archives()["sanity"])
    assert mt.load(path).tolist() == [0.0, 1.0, 2.0]


@pytest.mark.parametrize("kind", [k for k in _hostile_archives() if k != "sanity"])
def test_hostile_archives_raise_value_error_naming_the_path(kind, tmp_path):
    data = _hostile_archives()[kind]
    path = _write(tmp_path / f"{kind}.pt", data)
    with pytest.raises(ValueError) as info:
        mt.load(path)
    assert str(path) in str(info.value) and "checkpoint" in str(info.value), str(info.value)
    with pytest.raises(ValueError, match="BytesIO"):
        mt.load(io.BytesIO(data))


def test_the_huge_array_is_refused_before_allocating_it(tmp_path):
    data = _hostile_archives()["huge-array"]
    assert len(data) < 1000  # under a kilobyte
    with pytest.raises(ValueError, match=r"shape \(100000000000000,\).*800000000000000 bytes.*holds 8 bytes"):
        mt.load(_write(tmp_path / "huge.pt", data))
