"""mt.save / mt.load: round trips of model and optimizer states, paths, and refusing foreign files."""

from __future__ import annotations

import bz2
import io
import json
import math
import os
import pickle
import struct
import zlib
from collections import OrderedDict

import numpy as np
import pytest

import minitensor as mt
import minitensor.nn as nn
from minitensor import optim


def _model():
    mt.manual_seed(0)
    return nn.Sequential(nn.Linear(4, 8), nn.LayerNorm(8), nn.ReLU(), nn.Linear(8, 3))


def test_model_state_dict_round_trip_keeps_order_dtypes_and_values(tmp_path):
    model = _model()
    sd = model.state_dict()
    path = mt.save(sd, tmp_path / "model.npz")
    loaded = mt.load(path)
    assert type(loaded) is OrderedDict and list(loaded) == list(sd)
    for key in sd:
        assert loaded[key].dtype == sd[key].dtype and loaded[key].shape == sd[key].shape
        np.testing.assert_array_equal(loaded[key], sd[key])


def test_a_loaded_state_dict_restores_a_fresh_model(tmp_path):
    model = _model()
    mt.save(model.state_dict(), tmp_path / "model.npz")
    mt.manual_seed(1)
    other = nn.Sequential(nn.Linear(4, 8), nn.LayerNorm(8), nn.ReLU(), nn.Linear(8, 3))
    x = mt.randn(5, 4)
    assert not np.allclose(other(x).numpy(), model(x).numpy())
    other.load_state_dict(mt.load(tmp_path / "model.npz"))
    np.testing.assert_array_equal(other(x).numpy(), model(x).numpy())


def test_optimizer_state_round_trip_keeps_the_nested_structure(tmp_path):
    model = _model()
    opt = optim.Adam([{"params": list(model.parameters())[:2], "lr": 0.01}, {"params": list(model.parameters())[2:]}])
    for _ in range(2):
        opt.zero_grad()
        (model(mt.randn(3, 4)) ** 2).mean().backward()
        opt.step()
    sd = opt.state_dict()
    loaded = mt.load(mt.save(sd, tmp_path / "opt"))
    assert list(loaded) == ["state", "param_groups"]
    assert list(loaded["state"]) == list(sd["state"]) and all(isinstance(k, int) for k in loaded["state"])
    for i, state in sd["state"].items():
        assert list(loaded["state"][i]) == list(state)
        assert loaded["state"][i]["step"] == state["step"] and isinstance(loaded["state"][i]["step"], int)
        for key in ("exp_avg", "exp_avg_sq"):
            assert loaded["state"][i][key].dtype == np.float32
            np.testing.assert_array_equal(loaded["state"][i][key], state[key])
    assert loaded["param_groups"] == sd["param_groups"]
    assert isinstance(loaded["param_groups"][0]["betas"], tuple)


def test_nested_values_of_every_supported_kind_round_trip(tmp_path):
    obj = {
        "ints": [1, -2, 2**40],
        "floats": (0.1, -math.inf, 1e-300),
        "flags": [True, False, None],
        "text": "héllo",
        3: {"nested": OrderedDict(b=np.arange(3), a=np.zeros((0, 2), np.float32))},
        "bools": np.array([True, False]),
        "scalar": np.float32(1.5),
        "tensor": mt.tensor([1.0, 2.0]),
        "empty": {},
    }
    loaded = mt.load(mt.save(obj, tmp_path / "x.npz"))
    assert list(loaded) == list(obj) and type(loaded) is dict
    assert loaded["ints"] == [1, -2, 2**40] and loaded["floats"] == (0.1, -math.inf, 1e-300)
    assert loaded["flags"] == [True, False, None] and loaded["text"] == "héllo"
    assert type(loaded[3]["nested"]) is OrderedDict and list(loaded[3]["nested"]) == ["b", "a"]
    np.testing.assert_array_equal(loaded[3]["nested"]["b"], np.arange(3))
    assert loaded[3]["nested"]["a"].shape == (0, 2) and loaded[3]["nested"]["a"].dtype == np.float32
    assert loaded["bools"].dtype == np.bool_
    assert loaded["scalar"].shape == () and loaded["scalar"].dtype == np.float32 and loaded["scalar"] == 1.5
    assert isinstance(loaded["tensor"], np.ndarray) and loaded["tensor"].tolist() == [1.0, 2.0]
    assert loaded["empty"] == {}


def test_nan_round_trips(tmp_path):
    assert math.isnan(mt.load(mt.save({"x": math.nan}, tmp_path / "n"))["x"])


# ---------------------------------------------------------------------- paths
def test_save_writes_the_exact_path_given(tmp_path):
    for name in ("ckpt", "model.pt", "weights.bin", "c.npz"):
        written = mt.save({"a": np.ones(2)}, tmp_path / name)
        assert written == str(tmp_path / name)
        assert mt.load(tmp_path / name)["a"].tolist() == [1.0, 1.0]
        assert mt.load(str(tmp_path / name))["a"].tolist() == [1.0, 1.0]
    assert sorted(os.listdir(tmp_path)) == ["c.npz", "ckpt", "model.pt", "weights.bin"]


def test_load_reads_the_exact_path_and_points_to_an_older_npz(tmp_path):
    mt.save({}, tmp_path / "old.npz")  # what save(obj, "old") wrote before
    with pytest.raises(FileNotFoundError, match=r"'.*old'.*old\.npz.*appended"):
        mt.load(tmp_path / "old")


def test_save_and_load_through_open_files_and_bytes_io(tmp_path):
    model = _model()
    buffer = io.BytesIO()
    assert mt.save(model.state_dict(), buffer) is None
    buffer.seek(0)
    loaded = mt.load(buffer)
    assert list(loaded) == list(model.state_dict())
    np.testing.assert_array_equal(loaded["0.weight"], model[0].weight.numpy())
    with open(tmp_path / "m.pt", "wb") as f:
        mt.save({"epoch": 3, "w": mt.ones(2)}, f)
    with open(tmp_path / "m.pt", "rb") as f:
        assert mt.load(f)["epoch"] == 3
    assert mt.load(tmp_path / "m.pt")["w"].tolist() == [1.0, 1.0]
    # an archive after other data in the same file is read from the file's position
    buffer = io.BytesIO()
    buffer.write(b"a header of someone else's format")
    start = buffer.tell()
    mt.save([1, 2], buffer)
    buffer.seek(start)
    assert mt.load(buffer) == [1, 2]


class _Stream(io.RawIOBase):
    """A readable file that cannot seek (a pipe, a socket)."""

    def __init__(self, data: bytes):
        self._data = io.BytesIO(data)

    def readable(self) -> bool:
        return True

    def readinto(self, b) -> int:
        chunk = self._data.read(len(b))
        b[: len(chunk)] = chunk
        return len(chunk)


def test_load_reads_an_unseekable_stream():
    buffer = io.BytesIO()
    mt.save({"x": np.arange(3)}, buffer)
    assert mt.load(_Stream(buffer.getvalue()))["x"].tolist() == [0, 1, 2]


@pytest.mark.parametrize("location", [None, "cpu", "cpu:0", {"cuda:0": "cpu"}, lambda storage, loc: storage])
def test_map_location_keeping_everything_on_the_cpu_is_accepted(location, tmp_path):
    path = mt.save({"w": np.ones(2)}, tmp_path / "c.pt")
    for weights_only in (None, True, False):
        for mmap in (None, False, True):
            loaded = mt.load(path, map_location=location, weights_only=weights_only, mmap=mmap)
            assert loaded["w"].tolist() == [1.0, 1.0]


def test_map_location_may_be_a_torch_cpu_device(tmp_path):
    torch = pytest.importorskip("torch")
    path = mt.save({"w": np.ones(2)}, tmp_path / "c.pt")
    assert mt.load(path, map_location=torch.device("cpu"))["w"].tolist() == [1.0, 1.0]
    with pytest.raises(ValueError, match="'cuda'"):
        mt.load(path, map_location=torch.device("cuda"))


@pytest.mark.parametrize("location", ["cuda", "cuda:1", "mps", {"cpu": "cuda:0"}])
def test_map_location_naming_another_device_raises_naming_it(location, tmp_path):
    path = mt.save({"w": np.ones(2)}, tmp_path / "c.pt")
    with pytest.raises(ValueError, match=r"'(cuda|mps)[:01]*'.*CPU only"):
        mt.load(path, map_location=location)


def test_bad_load_options_raise_type_error(tmp_path):
    path = mt.save({}, tmp_path / "c.pt")
    with pytest.raises(TypeError, match="map_location.*int"):
        mt.load(path, map_location=3)
    with pytest.raises(TypeError, match="weights_only.*'yes'"):
        mt.load(path, weights_only="yes")
    with pytest.raises(TypeError, match="mmap"):
        mt.load(path, mmap=1)


def test_save_replaces_an_existing_file_and_leaves_no_partial_file(tmp_path):
    mt.save({"v": np.zeros(3)}, tmp_path / "c.npz")
    mt.save({"v": np.ones(3)}, tmp_path / "c.npz")
    assert mt.load(tmp_path / "c.npz")["v"].tolist() == [1.0, 1.0, 1.0]
    assert sorted(os.listdir(tmp_path)) == ["c.npz"]
    with pytest.raises(TypeError):
        mt.save({"v": np.ones(3), "bad": object()}, tmp_path / "c.npz")  # fails before writing anything
    assert mt.load(tmp_path / "c.npz")["v"].tolist() == [1.0, 1.0, 1.0]
    assert sorted(os.listdir(tmp_path)) == ["c.npz"]


def test_missing_file_raises_file_not_found(tmp_path):
    with pytest.raises(FileNotFoundError, match="nothing-here"):
        mt.load(tmp_path / "nothing-here.npz")


def test_path_must_be_a_path_or_a_file():
    with pytest.raises(TypeError, match="path.*file object.*int"):
        mt.save({}, 123)
    with pytest.raises(TypeError, match="path.*file object.*NoneType"):
        mt.load(None)


# ------------------------------------------------------------ foreign files
def _write(path, data: bytes):
    with open(path, "wb") as f:
        f.write(data)
    return path


def _foreign_files(tmp_path):
    good = mt.save({"w": np.arange(100.0)}, tmp_path / "good.npz")
    with open(good, "rb") as f:
        good_bytes = f.read()
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
    mt.load(mt.save({"a": np.ones(1)}, tmp_path / "a"))
    for path in _foreign_files(tmp_path):
        with pytest.raises(ValueError):
            mt.load(path)
    assert calls and all(flag is False for flag in calls)


def test_a_pickle_file_is_never_executed(tmp_path):
    class Boom:
        def __reduce__(self):
            return (os.mkdir, (str(tmp_path / "pwned"),))

    path = _write(tmp_path / "evil.npz", pickle.dumps(Boom()))
    with pytest.raises(ValueError, match="evil"):
        mt.load(path)
    assert not os.path.exists(tmp_path / "pwned")


# -------------------------------------------------------------- bad objects
@pytest.mark.parametrize(
    "obj, match",
    [
        ({"a": np.array([{"x": 1}], dtype=object)}, r"obj\['a'\].*pickle"),
        ({"f": print}, r"obj\['f'\].*builtin_function_or_method"),
        ({1.5: np.ones(1)}, "keys must be str or int"),
        ({"s": {1, 2}}, "set"),
        ([np.ones(1), object()], r"obj\[1\]"),
    ],
)
def test_unsupported_objects_raise_type_error_naming_where(obj, match, tmp_path):
    with pytest.raises(TypeError, match=match):
        mt.save(obj, tmp_path / "bad")
    assert not os.listdir(tmp_path)


@pytest.mark.parametrize(
    "make",
    [
        lambda: nn.Linear(2, 2),
        lambda: optim.SGD(nn.Linear(2, 2).parameters(), lr=0.1),
        lambda: {"model": nn.Sequential(nn.Linear(2, 2))},
    ],
    ids=["module", "optimizer", "module-in-a-dict"],
)
def test_saving_a_whole_module_or_optimizer_points_to_state_dict(make, tmp_path):
    with pytest.raises(TypeError, match=r"(Linear|SGD|Sequential).*state_dict\(\)") as info:
        mt.save(make(), tmp_path / "m.pt")
    assert "pickle" in str(info.value)
    assert not os.listdir(tmp_path)


def test_any_other_object_names_state_dict_too(tmp_path):
    with pytest.raises(TypeError, match=r"obj\['f'\].*function.*state_dict\(\)"):
        mt.save({"f": lambda: 0}, tmp_path / "f.pt")


def test_nesting_deeper_than_the_limit_is_refused_on_save(tmp_path):
    deep = []
    for _ in range(150):
        deep = [deep]
    with pytest.raises(ValueError, match="nested deeper than 100"):
        mt.save(deep, tmp_path / "d.pt")
    loop = []
    loop.append(loop)
    with pytest.raises(ValueError, match="contains itself"):
        mt.save(loop, tmp_path / "d.pt")
    ok = []
    for _ in range(99):
        ok = [ok]
    assert mt.load(mt.save(ok, tmp_path / "ok.pt")) == ok


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
    """name -> bytes of a file that a reader must refuse (each one is read by the old loader)."""
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
