"""mt.save / mt.load: round trips of model and optimizer states, paths, and refusing foreign files."""

from __future__ import annotations

import json
import math
import os
import pickle
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
def test_npz_suffix_is_added_on_save_and_optional_on_load(tmp_path):
    written = mt.save({"a": np.ones(2)}, tmp_path / "ckpt")
    assert written == str(tmp_path / "ckpt.npz") and os.path.exists(written)
    assert mt.load(tmp_path / "ckpt")["a"].tolist() == [1.0, 1.0]
    assert mt.load(str(tmp_path / "ckpt.npz"))["a"].tolist() == [1.0, 1.0]
    assert mt.save({}, tmp_path / "model.pt") == str(tmp_path / "model.pt.npz")
    assert mt.load(tmp_path / "model.pt") == {}


def test_save_replaces_an_existing_file_and_leaves_no_partial_file(tmp_path):
    mt.save({"v": np.zeros(3)}, tmp_path / "c.npz")
    mt.save({"v": np.ones(3)}, tmp_path / "c.npz")
    assert mt.load(tmp_path / "c.npz")["v"].tolist() == [1.0, 1.0, 1.0]
    assert sorted(os.listdir(tmp_path)) == ["c.npz"]


def test_missing_file_raises_file_not_found(tmp_path):
    with pytest.raises(FileNotFoundError, match="nothing-here"):
        mt.load(tmp_path / "nothing-here.npz")


def test_path_must_be_a_path():
    with pytest.raises(TypeError, match="path"):
        mt.save({}, 123)
    with pytest.raises(TypeError, match="path"):
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
