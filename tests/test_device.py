"""mt.device, device= on factories and layers, to()/cpu()/cuda() on tensors and modules."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

import minitensor as mt
import minitensor.nn as nn


def test_device_str_repr_and_equality_as_pytorch() -> None:
    torch = pytest.importorskip("torch")
    for spec in ["cpu", "cpu:0", "cuda", "cuda:1"]:
        ours, theirs = mt.device(spec), torch.device(spec)
        assert (str(ours), repr(ours), ours.type, ours.index) == (str(theirs), repr(theirs), theirs.type, theirs.index)
    assert mt.device("cuda", 1) == mt.device("cuda:1") != mt.device("cuda")
    assert hash(mt.device("cpu")) == hash(mt.device(mt.device("cpu")))
    assert mt.device("cpu") == "cpu" and mt.device("cpu") != "cuda"
    assert pickle.loads(pickle.dumps(mt.device("cuda:2"))) == mt.device("cuda:2")


@pytest.mark.parametrize("bad", ["gpu", "cuda:x", "cpu:-1"])
def test_device_rejects_unknown_names(bad) -> None:
    with pytest.raises(ValueError, match="device"):
        mt.device(bad)


def test_tensor_device_is_cpu() -> None:
    t = mt.zeros(2)
    assert t.device == mt.device("cpu") and t.device.type == "cpu" and not t.is_cuda
    assert t.cpu() is t


FACTORIES = [
    ("tensor", lambda d: mt.tensor([1.0], device=d)),
    ("zeros", lambda d: mt.zeros(2, device=d)),
    ("ones", lambda d: mt.ones(2, device=d)),
    ("empty", lambda d: mt.empty(2, device=d)),
    ("full", lambda d: mt.full((2,), 3.0, device=d)),
    ("arange", lambda d: mt.arange(3, device=d)),
    ("randn", lambda d: mt.randn(2, device=d)),
    ("rand", lambda d: mt.rand(2, device=d)),
    ("eye", lambda d: mt.eye(2, device=d)),
    ("zeros_like", lambda d: mt.zeros_like(mt.ones(2), device=d)),
    ("ones_like", lambda d: mt.ones_like(mt.ones(2), device=d)),
    ("full_like", lambda d: mt.full_like(mt.ones(2), 7, device=d)),
    ("randn_like", lambda d: mt.randn_like(mt.ones(2), device=d)),
    ("rand_like", lambda d: mt.rand_like(mt.ones(2), device=d)),
    ("empty_like", lambda d: mt.empty_like(mt.ones(2), device=d)),
    ("randint", lambda d: mt.randint(0, 3, (2,), device=d)),
    ("randperm", lambda d: mt.randperm(3, device=d)),
    ("Linear", lambda d: nn.Linear(2, 3, device=d)),
    ("LayerNorm", lambda d: nn.LayerNorm(2, device=d)),
    ("Embedding", lambda d: nn.Embedding(4, 2, device=d)),
    ("MultiheadAttention", lambda d: nn.MultiheadAttention(4, 2, device=d)),
    ("TransformerEncoderLayer", lambda d: nn.TransformerEncoderLayer(4, 2, 8, device=d)),
]


@pytest.mark.parametrize("name, make", FACTORIES, ids=[f[0] for f in FACTORIES])
def test_factories_and_layers_take_cpu_devices_and_refuse_others(name, make) -> None:
    for ok in (None, "cpu", "cpu:0", mt.device("cpu")):
        make(ok)
    for bad in ("cuda", mt.device("cuda:0"), "mps"):
        with pytest.raises(ValueError, match=f"{name}.*device.*{str(mt.device(bad))!r}"):
            make(bad)


def test_to_accepts_pytorch_forms() -> None:
    x = mt.tensor([1.5, -2.0], requires_grad=True)
    assert x.to("cpu") is x and x.to(mt.device("cpu")) is x and x.to(x) is x
    assert x.to("cpu", mt.float64).dtype == mt.float64
    assert x.to(device="cpu", dtype=mt.float64, non_blocking=True).dtype == mt.float64
    assert x.to(mt.zeros(1, dtype=mt.float64)).dtype == mt.float64
    assert x.to(mt.long).tolist() == [1, -2] and x.to(mt.long).dtype == mt.int64
    copied = x.to("cpu", copy=True)
    assert copied is not x and copied.tolist() == x.tolist()
    with pytest.raises(ValueError, match="device.*'cuda:0'"):
        x.to("cuda:0")
    with pytest.raises(TypeError, match="unexpected keyword"):
        x.to(devise="cpu")


def test_to_between_floats_stays_differentiable() -> None:
    x = mt.tensor([1.0, 2.0, 3.0], requires_grad=True)
    w = mt.tensor([0.5, -1.0, 2.0], dtype=mt.float64)
    (x.to("cpu", mt.float64) * w).sum().backward()
    assert x.grad.dtype == mt.float32 and x.grad.tolist() == [0.5, -1.0, 2.0]


def test_cuda_raises_naming_cuda() -> None:
    with pytest.raises(RuntimeError, match="CUDA"):
        mt.zeros(2).cuda()
    with pytest.raises(RuntimeError, match="Linear.cuda.*CUDA"):
        nn.Linear(2, 2).cuda()


def test_module_to_device_and_dtype_forms() -> None:
    model = nn.Sequential(nn.Linear(2, 3), nn.LayerNorm(3))
    weight = model[0].weight
    assert model.to("cpu") is model and model.cpu() is model and model.to(mt.device("cpu")) is model
    assert model.to("cpu", mt.float64) is model and weight.dtype == mt.float64 and model[0].weight is weight
    model.to(dtype=mt.float32)
    assert all(p.dtype == mt.float32 for p in model.parameters())
    model.to(mt.zeros(1, dtype=mt.float64))
    assert all(p.dtype == mt.float64 for p in model.parameters())
    model.type(mt.float32)
    assert weight.dtype == mt.float32
    model.half()
    assert weight.dtype == mt.float16
    with pytest.raises(ValueError, match="Sequential.to.*device.*'cuda'"):
        model.to("cuda")


def test_embedding_refuses_pytorch_options_it_does_not_implement() -> None:
    for kwargs in ({"max_norm": 1.0}, {"scale_grad_by_freq": True}, {"sparse": True}):
        with pytest.raises(ValueError, match=f"Embedding: {next(iter(kwargs))}"):
            nn.Embedding(4, 2, **kwargs)
    assert nn.Embedding(4, 2, None, None, 2.0, False, False).weight.shape == (4, 2)


def test_generator_device() -> None:
    assert mt.Generator("cpu").device == "cpu"
    with pytest.raises(ValueError, match="Generator.*'cuda'"):
        mt.Generator("cuda")


def test_device_object_is_immutable() -> None:
    d = mt.device("cpu")
    with pytest.raises(AttributeError):
        d.type = "cuda"
    assert np.asarray(mt.ones(2, device=d)).tolist() == [1.0, 1.0]
