"""mt.save / mt.load within minitensor: round trips of model and optimizer states, values of every
kind, paths and open files, load's options, and objects that cannot be saved."""

from __future__ import annotations

import io
import json
import math
import os
import zipfile
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
        assert type(loaded[key]) is mt.Tensor and not loaded[key].requires_grad
        assert loaded[key].dtype == sd[key].dtype and loaded[key].shape == sd[key].shape
        np.testing.assert_array_equal(loaded[key], sd[key])


def test_save_writes_pytorchs_zip_layout(tmp_path):
    path = mt.save({"w": mt.ones(3)}, tmp_path / "c.pt")
    with zipfile.ZipFile(path) as archive:
        names = archive.namelist()
        assert names == [
            "archive/data.pkl", "archive/.format_version", "archive/.storage_alignment", "archive/byteorder",
            "archive/data/0", "archive/version", "archive/.data/serialization_id",
        ]  # fmt: skip
        assert archive.read("archive/version") == b"3\n" and archive.read("archive/.format_version") == b"1"
        assert archive.read("archive/byteorder") in (b"little", b"big")
        assert len(archive.read("archive/.data/serialization_id")) == 40
        for info in archive.infolist():
            assert info.compress_type == zipfile.ZIP_STORED
            with open(path, "rb") as f:  # each record's bytes start at a multiple of 64
                f.seek(info.header_offset + 26)
                name_length, extra_length = np.frombuffer(f.read(4), "<u2")
            assert (info.header_offset + 30 + name_length + extra_length) % 64 == 0, info.filename


def test_the_same_object_gives_the_same_bytes(tmp_path):
    model = _model()
    first, second = io.BytesIO(), io.BytesIO()
    mt.save(model.state_dict(), first)
    mt.save(model.state_dict(), second)
    assert first.getvalue() == second.getvalue()


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
        for key in ("exp_avg", "exp_avg_sq"):  # NumPy arrays in the optimizer come back as Tensors
            assert type(loaded["state"][i][key]) is mt.Tensor and loaded["state"][i][key].dtype == np.float32
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
        "set": {1, "a"},
        "bytes": b"\x00\xff",
        "big": -(2**100),
        "dtype": mt.float16,
    }
    loaded = mt.load(mt.save(obj, tmp_path / "x.npz"))
    assert list(loaded) == list(obj) and type(loaded) is dict
    assert loaded["ints"] == [1, -2, 2**40] and loaded["floats"] == (0.1, -math.inf, 1e-300)
    assert loaded["flags"] == [True, False, None] and loaded["text"] == "héllo"
    assert type(loaded[3]["nested"]) is OrderedDict and list(loaded[3]["nested"]) == ["b", "a"]
    np.testing.assert_array_equal(loaded[3]["nested"]["b"], np.arange(3))
    assert loaded[3]["nested"]["a"].shape == (0, 2) and loaded[3]["nested"]["a"].dtype == np.float32
    assert loaded["bools"].dtype == np.bool_
    assert loaded["scalar"].shape == () and loaded["scalar"].dtype == np.float32 and loaded["scalar"].item() == 1.5
    assert type(loaded["tensor"]) is mt.Tensor and loaded["tensor"].tolist() == [1.0, 2.0]
    assert loaded["empty"] == {} and loaded["set"] == {1, "a"} and loaded["bytes"] == b"\x00\xff"
    assert loaded["big"] == -(2**100) and loaded["dtype"] == mt.float16


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8", "bool"])
def test_every_dtype_round_trips_exactly(dtype, rng, tmp_path):
    values = rng.normal(0, 100, (3, 4)).astype(dtype)
    loaded = mt.load(mt.save({"t": mt.from_numpy(values), "a": values}, tmp_path / "t.pt"))
    for key in ("t", "a"):
        assert loaded[key].dtype == values.dtype
        np.testing.assert_array_equal(loaded[key].numpy(), values)


def test_views_keep_sharing_one_storage(tmp_path):
    base = mt.arange(24.0).reshape(4, 6)
    views = {"base": base, "rows": base[1:3], "cols": base[:, 2:5], "t": base.t(), "step": base[::2, 1::2]}
    with zipfile.ZipFile(mt.save(views, tmp_path / "v.pt")) as archive:
        assert [n for n in archive.namelist() if "/data/" in n] == ["archive/data/0"]  # one storage for all
    loaded = mt.load(tmp_path / "v.pt")
    for key, view in views.items():
        np.testing.assert_array_equal(loaded[key].numpy(), view.numpy())
        assert np.shares_memory(loaded[key].numpy(), loaded["base"].numpy()), key
    loaded["base"][1, 3] = -1.0  # one storage: a change shows through every view
    assert loaded["rows"][0, 3].item() == -1.0 and loaded["t"][3, 1].item() == -1.0


def test_a_tensor_met_twice_is_one_tensor_after_loading(tmp_path):
    shared = mt.ones(3)
    loaded = mt.load(mt.save({"a": shared, "b": [shared]}, tmp_path / "s.pt"))
    assert loaded["a"] is loaded["b"][0]


def test_parameters_and_requires_grad_survive(tmp_path):
    weight = nn.Parameter(mt.ones(2, 2))
    frozen = nn.Parameter(mt.zeros(2), requires_grad=False)
    leaf = mt.ones(2, requires_grad=True)
    loaded = mt.load(mt.save([weight, frozen, leaf, leaf * 2], tmp_path / "p.pt"))
    assert type(loaded[0]) is nn.Parameter and loaded[0].requires_grad
    assert type(loaded[1]) is nn.Parameter and not loaded[1].requires_grad
    assert type(loaded[2]) is mt.Tensor and loaded[2].requires_grad and loaded[2].is_leaf
    assert loaded[3].requires_grad and loaded[3].is_leaf and loaded[3].tolist() == [2.0, 2.0]


def test_negative_strides_are_saved_as_a_copy(tmp_path):
    values = np.arange(6.0)[::-1]
    loaded = mt.load(mt.save(mt.from_numpy(values), tmp_path / "r.pt"))
    assert loaded.tolist() == values.tolist()


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


def test_mmap_maps_the_file_copy_on_write(tmp_path):
    path = mt.save({"w": mt.arange(1000.0), "v": mt.arange(5)}, tmp_path / "m.pt")
    with open(path, "rb") as f:
        before = f.read()
    loaded = mt.load(path, mmap=True)
    np.testing.assert_array_equal(loaded["w"].numpy(), np.arange(1000.0, dtype=np.float32))
    assert loaded["v"].tolist() == [0, 1, 2, 3, 4]
    assert not loaded["w"].numpy().flags.owndata  # a view of the mapping, not a copy
    loaded["w"][0] = 7.0  # changing the tensor never changes the file
    with open(path, "rb") as f:
        assert f.read() == before


def test_mmap_needs_a_path():
    buffer = io.BytesIO()
    mt.save({}, buffer)
    buffer.seek(0)
    with pytest.raises(ValueError, match="file path.*mmap"):
        mt.load(buffer, mmap=True)


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
    with pytest.raises(TypeError, match="pickle_module must be None"):
        mt.load(path, pickle_module=__import__("pickle"))
    with pytest.raises(TypeError, match="errors"):
        mt.load(path, errors="strict")


def test_load_takes_weights_only_and_mmap_by_keyword_only_as_pytorch(tmp_path):
    path = mt.save({}, tmp_path / "c.pt")
    with pytest.raises(TypeError):
        mt.load(path, None, None, True)  # weights_only is keyword-only in torch.load
    assert mt.load(path, "cpu", None, weights_only=True, mmap=False, encoding="latin1") == {}


def test_bad_save_options_raise(tmp_path):
    with pytest.raises(TypeError, match="pickle_module"):
        mt.save({}, tmp_path / "c.pt", pickle_module=json)
    with pytest.raises(ValueError, match="pickle_protocol.*1"):
        mt.save({}, tmp_path / "c.pt", pickle_protocol=1)
    with pytest.raises(ValueError, match="pre-1.6"):
        mt.save({}, tmp_path / "c.pt", _use_new_zipfile_serialization=False)
    assert not os.listdir(tmp_path)
    mt.save({"w": mt.ones(1)}, tmp_path / "c.pt", _disable_byteorder_record=True)
    with zipfile.ZipFile(tmp_path / "c.pt") as archive:
        assert "archive/byteorder" not in archive.namelist()
    assert mt.load(tmp_path / "c.pt")["w"].tolist() == [1.0]


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


# -------------------------------------------------------------- bad objects
@pytest.mark.parametrize(
    "obj, match",
    [
        ({"a": np.array([{"x": 1}], dtype=object)}, r"obj\['a'\].*pickle"),
        ({"f": print}, r"obj\['f'\].*builtin_function_or_method"),
        ({1.5: np.ones(1)}, "keys must be str or int"),
        ({"s": frozenset({1, 2})}, "frozenset"),
        ([np.ones(1), object()], r"obj\[1\]"),
        ({"u": np.ones(2, np.uint16)}, r"obj\['u'\].*uint16"),
        ({"c": np.ones(2, np.complex64)}, r"obj\['c'\].*complex64"),
    ],
)
def test_unsupported_objects_raise_type_error_naming_where(obj, match, tmp_path):
    with pytest.raises(TypeError, match=match):
        mt.save(obj, tmp_path / "bad")
    assert not os.listdir(tmp_path)


def test_saving_an_optimizer_object_points_to_state_dict(tmp_path):
    with pytest.raises(TypeError, match=r"SGD.*state_dict\(\)"):
        mt.save({"opt": optim.SGD(nn.Linear(2, 2).parameters(), lr=0.1)}, tmp_path / "m.pt")
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
