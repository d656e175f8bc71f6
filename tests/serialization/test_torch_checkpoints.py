"""Checkpoints both ways with PyTorch as the oracle: torch.save -> mt.load and mt.save -> torch.load
(weights_only=True), for every dtype, views sharing storage, bfloat16, containers, torch.Size, and
optimizer state dicts that carry training on across the two libraries."""

from __future__ import annotations

import io
import pickle
import zipfile
from collections import OrderedDict

import numpy as np
import pytest

import minitensor as mt
import minitensor.nn as nn
from minitensor import optim

torch = pytest.importorskip("torch")

MINITENSOR_DTYPES = ["float16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8", "bool"]


def via_torch_save(obj) -> io.BytesIO:
    buffer = io.BytesIO()
    torch.save(obj, buffer)
    buffer.seek(0)
    return buffer


def via_mt_save(obj) -> io.BytesIO:
    buffer = io.BytesIO()
    mt.save(obj, buffer)
    buffer.seek(0)
    return buffer


def values(rng, dtype: str, shape=(3, 5)) -> np.ndarray:
    return (rng.normal(0, 50, shape) if dtype != "bool" else rng.random(shape) < 0.5).astype(dtype)


# ------------------------------------------------------------------ tensors
@pytest.mark.parametrize("dtype", MINITENSOR_DTYPES)
def test_torch_tensors_of_every_dtype_load_exactly(dtype, rng):
    array = values(rng, dtype)
    loaded = mt.load(via_torch_save({"t": torch.from_numpy(array), "scalar": torch.from_numpy(array[0, :1])[0]}))
    assert type(loaded["t"]) is mt.Tensor and loaded["t"].dtype == np.dtype(dtype)
    np.testing.assert_array_equal(loaded["t"].numpy(), array)
    assert loaded["scalar"].shape == () and loaded["scalar"].item() == array[0, 0]


@pytest.mark.parametrize("dtype", MINITENSOR_DTYPES)
def test_minitensor_tensors_of_every_dtype_load_in_pytorch_exactly(dtype, rng):
    array = values(rng, dtype)
    loaded = torch.load(via_mt_save({"t": mt.from_numpy(array), "a": array}), weights_only=True)
    for key in ("t", "a"):
        assert loaded[key].dtype == getattr(torch, dtype)
        np.testing.assert_array_equal(loaded[key].numpy(), array)


def test_bfloat16_loads_as_float32_exactly(rng):
    theirs = torch.from_numpy(values(rng, "float32")).to(torch.bfloat16)
    theirs[0, :3] = torch.tensor([float("inf"), float("-inf"), float("nan")])
    loaded = mt.load(via_torch_save([theirs, theirs[1:, 2:]]))
    assert loaded[0].dtype == mt.float32
    np.testing.assert_array_equal(loaded[0].numpy(), theirs.float().numpy())
    np.testing.assert_array_equal(loaded[1].numpy(), theirs[1:, 2:].float().numpy())
    assert np.shares_memory(loaded[0].numpy(), loaded[1].numpy())  # still one storage


def test_torch_views_keep_sharing_their_storage(rng):
    base = torch.from_numpy(values(rng, "float32", (6, 8)))
    views = OrderedDict(base=base, offset=base[2:, 3:], strided=base[::2, 1::3], t=base.t(), col=base[:, 5])
    views["expanded"] = base[0].expand(4, 8)  # stride 0
    loaded = mt.load(via_torch_save(views))
    for key, view in views.items():
        assert loaded[key].shape == tuple(view.shape)
        np.testing.assert_array_equal(loaded[key].numpy(), view.numpy())
        assert np.shares_memory(loaded[key].numpy(), loaded["base"].numpy()), key
    loaded["base"][3, 5] = 1234.0
    assert loaded["offset"][1, 2].item() == 1234.0 and loaded["col"][3].item() == 1234.0


def test_minitensor_views_keep_sharing_their_storage_in_pytorch():
    base = mt.arange(48.0).reshape(6, 8)
    views = {"base": base, "offset": base[2:, 3:], "strided": base[::2, 1::3], "t": base.t()}
    loaded = torch.load(via_mt_save(views), weights_only=True)
    pointer = loaded["base"].untyped_storage().data_ptr()
    for key, view in views.items():
        np.testing.assert_array_equal(loaded[key].numpy(), view.numpy())
        assert loaded[key].untyped_storage().data_ptr() == pointer, key
    assert loaded["offset"].storage_offset() == 19 and loaded["strided"].stride() == (16, 3)


def test_containers_keep_their_types_both_ways():
    obj = {
        "od": OrderedDict([("b", 1), ("a", 2)]),
        "list": [1, [2.5, None]],
        "tuple": (True, "x", (3,)),
        "nested": {0: {"k": torch.ones(2)}},
        "size": torch.Size([2, 3]),
        "big": 2**80,
    }
    loaded = mt.load(via_torch_save(obj))
    assert type(loaded) is dict and type(loaded["od"]) is OrderedDict and list(loaded["od"]) == ["b", "a"]
    assert loaded["list"] == [1, [2.5, None]] and type(loaded["list"][1]) is list
    assert loaded["tuple"] == (True, "x", (3,)) and type(loaded["tuple"]) is tuple
    assert loaded["nested"][0]["k"].tolist() == [1.0, 1.0] and loaded["big"] == 2**80
    assert loaded["size"] == (2, 3) and type(loaded["size"]) is tuple  # minitensor's shapes are tuples
    back = torch.load(via_mt_save(loaded), weights_only=True)
    assert type(back["od"]) is OrderedDict and list(back["od"]) == ["b", "a"]
    assert type(back["tuple"]) is tuple and type(back["list"][1]) is list and back["big"] == 2**80
    assert torch.equal(back["nested"][0]["k"], torch.ones(2))


def test_requires_grad_and_parameters_cross_both_ways():
    theirs = {"p": torch.nn.Parameter(torch.ones(2)), "g": torch.ones(2, requires_grad=True), "n": torch.ones(2)}
    ours = mt.load(via_torch_save(theirs))
    assert type(ours["p"]) is nn.Parameter and ours["p"].requires_grad
    assert ours["g"].requires_grad and not ours["n"].requires_grad
    back = torch.load(via_mt_save(ours), weights_only=True)
    assert type(back["p"]) is torch.nn.Parameter and back["g"].requires_grad and not back["n"].requires_grad


def test_a_file_torch_save_wrote_to_a_path_loads(tmp_path):
    path = tmp_path / "course_weights.pt"  # torch names the archive's folder after the file
    torch.save({"w": torch.arange(4)}, path)
    with zipfile.ZipFile(path) as archive:
        assert archive.namelist()[0] == "course_weights/data.pkl"
    assert mt.load(path)["w"].tolist() == [0, 1, 2, 3]
    assert mt.load(path, mmap=True)["w"].tolist() == [0, 1, 2, 3]


def test_a_big_endian_checkpoint_loads_as_pytorch_reads_it(rng):
    array = values(rng, "float32")
    buffer = via_mt_save({"w": mt.from_numpy(array), "h": mt.from_numpy(array.astype(np.float16))})
    swapped = io.BytesIO()
    with zipfile.ZipFile(buffer) as source, zipfile.ZipFile(swapped, "w") as target:
        for info in source.infolist():
            data = source.read(info)
            if info.filename == "archive/byteorder":
                data = b"big"
            elif info.filename == "archive/data/0":
                data = np.frombuffer(data, np.float32).byteswap().tobytes()
            elif info.filename == "archive/data/1":
                data = np.frombuffer(data, np.float16).byteswap().tobytes()
            target.writestr(info.filename, data)
    swapped.seek(0)
    theirs = torch.load(swapped, weights_only=True)
    swapped.seek(0)
    ours = mt.load(swapped)
    for key in ("w", "h"):
        np.testing.assert_array_equal(ours[key].numpy(), theirs[key].numpy())
    np.testing.assert_array_equal(ours["w"].numpy(), array)


# ------------------------------------------------------------------ what both refuse
def test_a_numpy_array_pickled_by_torch_save_is_refused_as_pytorch_refuses_it():
    buffer = via_torch_save({"w": np.ones(3)})
    with pytest.raises(pickle.UnpicklingError):
        torch.load(buffer, weights_only=True)
    buffer.seek(0)
    with pytest.raises(ValueError, match=r"numpy.*safe_globals") as info:
        mt.load(buffer)
    assert isinstance(info.value, pickle.UnpicklingError)
    buffer.seek(0)
    with pytest.raises(ValueError, match="numpy"):  # weights_only=False allows modules only
        mt.load(buffer, weights_only=False)


@pytest.mark.parametrize(
    "make, missing",
    [
        (lambda: torch.ones(2, dtype=torch.complex64), "complex64"),
        (lambda: torch.ones(2, dtype=torch.uint16), "uint16"),
        (lambda: torch.eye(2).to_sparse(), "sparse"),
    ],
    ids=["complex", "uint16", "sparse"],
)
def test_tensors_minitensor_does_not_have_are_refused_naming_what(make, missing):
    tensor = make()
    assert torch.load(via_torch_save(tensor), weights_only=True) is not None  # PyTorch allows them
    with pytest.raises(ValueError, match=f"{missing}.*minitensor does not have"):
        mt.load(via_torch_save(tensor))


def test_pytorchs_format_before_1_6_is_refused_saying_so():
    buffer = io.BytesIO()
    torch.save({"w": torch.ones(2)}, buffer, _use_new_zipfile_serialization=False)
    buffer.seek(0)
    with pytest.raises(ValueError, match="before version 1.6"):
        mt.load(buffer)


# ------------------------------------------------------------------ optimizers
def _pair(seed: int = 0):
    """The same small model in both libraries (weights drawn by NumPy), and a batch."""
    rng = np.random.default_rng(seed)
    weights = {
        "0.weight": rng.normal(0, 0.5, (8, 4)),
        "0.bias": rng.normal(0, 0.1, 8),
        "2.weight": rng.normal(0, 0.5, (3, 8)),
        "2.bias": np.zeros(3),
    }
    weights = {k: v.astype(np.float32) for k, v in weights.items()}
    ours = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 3))
    theirs = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Tanh(), torch.nn.Linear(8, 3))
    ours.load_state_dict({k: mt.from_numpy(v.copy()) for k, v in weights.items()})
    theirs.load_state_dict({k: torch.from_numpy(v.copy()) for k, v in weights.items()})
    return ours, theirs, rng.normal(0, 1, (16, 4)).astype(np.float32), rng.integers(0, 3, 16)


def _step(library, model, optimizer, x, y) -> float:
    loss = library.nn.functional.cross_entropy(model(library.tensor(x)), library.tensor(y))
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return loss.item()


OPTIMIZERS = {
    "Adam": {"lr": 0.05},
    "AdamW": {"lr": 0.05, "weight_decay": 0.1},
    "SGD": {"lr": 0.1, "momentum": 0.9},
    "SGD-nesterov": {"lr": 0.1, "momentum": 0.9, "nesterov": True, "weight_decay": 0.01},
}


@pytest.mark.parametrize("name", OPTIMIZERS)
def test_optimizer_state_dicts_have_pytorchs_layout(name):
    ours, theirs, x, y = _pair()
    kind, settings = name.split("-")[0], OPTIMIZERS[name]
    our_opt = getattr(optim, kind)(ours.parameters(), **settings)
    their_opt = getattr(torch.optim, kind)(theirs.parameters(), **settings)
    for _ in range(2):
        _step(mt, ours, our_opt, x, y)
        _step(torch, theirs, their_opt, x, y)
    mine, reference = mt.load(via_mt_save(our_opt.state_dict())), their_opt.state_dict()
    assert list(mine) == list(reference) == ["state", "param_groups"]
    assert list(mine["state"]) == list(reference["state"])
    for index, state in reference["state"].items():
        assert list(mine["state"][index]) == list(state)
    for our_group, their_group in zip(mine["param_groups"], reference["param_groups"]):
        # PyTorch's groups also carry foreach, fused, capturable, differentiable (CUDA and compile options)
        assert set(our_group) <= set(their_group) and our_group["params"] == their_group["params"]
        for key, value in our_group.items():
            assert value == their_group[key], key


@pytest.mark.parametrize("name", OPTIMIZERS)
def test_training_continues_across_the_libraries_through_checkpoints(name):
    """k steps here, a checkpoint, PyTorch carries on; and the other way: each continuation takes the
    same steps as the library that saved would have taken."""
    kind, settings = name.split("-")[0], OPTIMIZERS[name]
    *_, x, y = _pair()
    side = {mt: 0, torch: 1}  # which model of _pair() each library uses
    for first, second in ((mt, torch), (torch, mt)):
        optimizers = {mt: optim, torch: torch.optim}
        saver, reference = _pair()[side[first]], _pair()[side[first]]
        saver_opt = getattr(optimizers[first], kind)(saver.parameters(), **settings)
        reference_opt = getattr(optimizers[first], kind)(reference.parameters(), **settings)
        for _ in range(3):
            _step(first, saver, saver_opt, x, y)
            _step(first, reference, reference_opt, x, y)
        buffer = io.BytesIO()
        first.save({"model": saver.state_dict(), "optimizer": saver_opt.state_dict()}, buffer)
        buffer.seek(0)
        checkpoint = second.load(buffer, weights_only=True)
        resumed = _pair(seed=99)[side[second]]  # other weights: the checkpoint must overwrite them
        resumed.load_state_dict(checkpoint["model"])
        resumed_opt = getattr(optimizers[second], kind)(resumed.parameters(), lr=1.0)
        resumed_opt.load_state_dict(checkpoint["optimizer"])
        expected = [_step(first, reference, reference_opt, x, y) for _ in range(4)]
        got = [_step(second, resumed, resumed_opt, x, y) for _ in range(4)]
        np.testing.assert_allclose(got, expected, rtol=2e-5, err_msg=f"{first.__name__} -> {second.__name__}")
