"""The pooling layers (``nn/pooling.py``): PyTorch's attributes, reprs and empty state dicts, the
same outputs and gradients as PyTorch's layers (batched and unbatched, float32 and float64),
``return_indices`` feeding ``MaxUnpool``, and the docstring examples."""

from __future__ import annotations

import doctest
import importlib

import numpy as np
import pytest
from helpers import assert_module_matches_torch

import minitensor as mt
import minitensor.nn as nn
import minitensor.nn.functional as F

torch = pytest.importorskip("torch")

LAYERS = [
    ("MaxPool1d", (3,), {}),
    ("MaxPool1d", (2,), {"stride": 1, "padding": 1, "dilation": 2, "ceil_mode": True}),
    ("MaxPool2d", (2,), {}),
    ("MaxPool2d", ((2, 3),), {"stride": 1, "padding": 1, "dilation": (1, 2), "ceil_mode": True}),
    ("AvgPool1d", (3,), {"stride": 2, "padding": 1, "count_include_pad": False}),
    ("AvgPool2d", (3, 2, 1, True, False, 5), {}),
    ("AvgPool2d", ((2, 1),), {}),
    ("AdaptiveAvgPool1d", (3,), {}),
    ("AdaptiveAvgPool2d", ((None, 3),), {}),
    ("AdaptiveMaxPool1d", (2,), {}),
    ("AdaptiveMaxPool2d", ((3, 2),), {}),
    ("LPPool1d", (2, 3), {}),
    ("LPPool2d", (1.5, 2), {"stride": 1, "ceil_mode": True}),
]


@pytest.mark.parametrize("name,args,kwargs", LAYERS, ids=lambda v: v if isinstance(v, str) else str(v))
def test_layer_matches_pytorch(name, args, kwargs) -> None:
    ours, theirs = getattr(nn, name)(*args, **kwargs), getattr(torch.nn, name)(*args, **kwargs)
    assert repr(ours) == repr(theirs)
    assert {k: v for k, v in vars(ours).items() if not k.startswith("_") and k != "training"} == {
        k: v for k, v in vars(theirs).items() if not k.startswith("_") and k != "training"
    }
    assert list(ours.state_dict()) == []
    dims = 1 if name.endswith("1d") else 2
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 3, 7) if dims == 1 else (2, 3, 6, 7))
    if name.startswith("LP"):
        x = np.abs(x) + 0.1
    for dtype in (np.float64, np.float32):
        assert_module_matches_torch(ours, theirs.to(getattr(torch, np.dtype(dtype).name)), x.astype(dtype), torch)
        assert_module_matches_torch(ours, theirs, x[0].astype(dtype), torch)  # unbatched


@pytest.mark.parametrize("dims", [1, 2])
def test_max_unpool_inverts_max_pool_with_indices(dims) -> None:
    pool = getattr(nn, f"MaxPool{dims}d")(2, return_indices=True)
    unpool = getattr(nn, f"MaxUnpool{dims}d")(2)
    tpool, tunpool = (
        getattr(torch.nn, f"MaxPool{dims}d")(2, return_indices=True),
        getattr(torch.nn, f"MaxUnpool{dims}d")(2),
    )
    assert repr(unpool) == repr(tunpool)
    x = np.random.default_rng(1).standard_normal((2, 3, 5) if dims == 1 else (2, 3, 5, 5))
    y, indices = pool(mt.tensor(x, dtype=mt.float64))
    ty, tindices = tpool(torch.tensor(x))
    np.testing.assert_array_equal(indices.numpy(), tindices.numpy())
    size = x.shape[2:]
    out = unpool(y, indices, output_size=size)
    np.testing.assert_array_equal(out.numpy(), tunpool(ty, tindices, output_size=size).numpy())
    assert out.shape == x.shape
    even = x[..., :4] if dims == 1 else x[..., :4, :4]  # (the default output size, (L - 1) * stride + kernel)
    y, indices = pool(mt.tensor(even, dtype=mt.float64))
    np.testing.assert_array_equal(unpool(y, indices).numpy(), tunpool(*tpool(torch.tensor(even))).numpy())


def test_global_average_pooling_head() -> None:
    """A classifier head: AdaptiveAvgPool2d(1) then Flatten, as in ResNet."""
    head = nn.Sequential(nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(3, 2))
    x = mt.randn(4, 3, 5, 5)
    assert head(x).shape == (4, 2)
    np.testing.assert_allclose(head[1](head[0](x)).numpy(), x.numpy().mean(axis=(2, 3)), rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize(
    "name",
    [
        "minitensor.nn.pooling",
        "minitensor.nn.functional.pooling",
        "minitensor.ops.pooling",
        "minitensor.ops.pool_geometry",
    ],
)
def test_docstring_examples(name) -> None:
    module = importlib.import_module(name)
    flags = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE
    result = doctest.testmod(module, extraglobs={"mt": mt, "nn": nn, "F": F, "np": np}, optionflags=flags)
    assert result.attempted > 0 and result.failed == 0
