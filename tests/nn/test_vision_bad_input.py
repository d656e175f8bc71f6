"""Bad input to the pooling, normalisation, padding and resampling layers and functions: refused with
a ValueError (shape or value) or TypeError naming the argument, the expected and the actual value,
where PyTorch refuses it too (checked: PyTorch raises on the same call); before any kernel runs
(the kernels are replaced by functions that fail) and with nothing changed (running statistics)."""

from __future__ import annotations

import numpy as np
import pytest

import minitensor as mt
import minitensor.nn as nn
import minitensor.nn.functional as F
from minitensor import backend

torch = pytest.importorskip("torch")
tF = torch.nn.functional


def _x(*shape):
    return mt.ones(*shape), torch.ones(*shape)


X4, T4 = _x(2, 3, 5, 5)
X3, T3 = _x(2, 3, 5)
IDX = mt.tensor(np.zeros((1, 1, 2, 2), np.int64))
TIDX = torch.zeros(1, 1, 2, 2, dtype=torch.long)

# (name, ours, PyTorch's, exception, words the message must hold)
CASES = [
    (
        "pool padding over half the kernel",
        lambda: F.max_pool2d(X4, 3, padding=2),
        lambda: tF.max_pool2d(T4, 3, padding=2),
        ValueError,
        ["padding", "at most half", "padding=2", "kernel_size=3"],
    ),
    (
        "pool kernel larger than the padded input",
        lambda: F.max_pool2d(X4, 7),
        lambda: tF.max_pool2d(T4, 7),
        ValueError,
        ["kernel", "(5, 5)", "kernel_size=(7, 7)"],
    ),
    (
        "avg pool kernel larger than the input",
        lambda: F.avg_pool1d(X3, 6),
        lambda: tF.avg_pool1d(T3, 6),
        ValueError,
        ["(5,)", "padded by (0,)", "kernel_size=(6,)"],
    ),
    (
        "pool input rank",
        lambda: F.max_pool2d(mt.ones(1, 2, 3, 4, 5), 2),
        lambda: tF.max_pool2d(torch.ones(1, 2, 3, 4, 5), 2),
        ValueError,
        ["3 (unbatched) or 4 (batched)", "(1, 2, 3, 4, 5)"],
    ),
    (
        "pool1d input rank",
        lambda: F.max_pool1d(X4, 2),
        lambda: tF.max_pool1d(T4, 2),
        ValueError,
        ["2 (unbatched) or 3 (batched)", "(2, 3, 5, 5)"],
    ),
    (
        "pool stride 0",
        lambda: F.avg_pool2d(X4, 2, stride=0),
        lambda: tF.avg_pool2d(T4, 2, stride=0),
        ValueError,
        ["stride", "positive", "(0, 0)"],
    ),
    (
        "pool dilation 0",
        lambda: F.max_pool2d(X4, 2, dilation=0),
        lambda: tF.max_pool2d(T4, 2, dilation=0),
        ValueError,
        ["dilation", "positive"],
    ),
    (
        "pool negative padding",
        lambda: F.max_pool1d(X3, 2, padding=-1),
        lambda: tF.max_pool1d(T3, 2, padding=-1),
        ValueError,
        ["padding", "non-negative", "-1"],
    ),
    (
        "pool empty channels",
        lambda: F.max_pool2d(mt.ones(2, 0, 4, 4), 2),
        lambda: tF.max_pool2d(torch.ones(2, 0, 4, 4), 2),
        ValueError,
        ["non-empty", "(2, 0, 4, 4)"],
    ),
    (
        "divisor_override 0",
        lambda: F.avg_pool2d(X4, 2, divisor_override=0),
        lambda: tF.avg_pool2d(T4, 2, divisor_override=0),
        ValueError,
        ["divisor_override", "zero"],
    ),
    (
        "adaptive negative size",
        lambda: F.adaptive_max_pool2d(X4, (-1, 2)),
        lambda: tF.adaptive_max_pool2d(T4, (-1, 2)),
        ValueError,
        ["output_size", "non-negative", "(-1, 2)"],
    ),
    (
        "unpool index outside",
        lambda: F.max_unpool2d(mt.ones(1, 1, 2, 2), mt.tensor(np.full((1, 1, 2, 2), 40)), 2),
        lambda: tF.max_unpool2d(torch.ones(1, 1, 2, 2), torch.full((1, 1, 2, 2), 40), 2),
        ValueError,
        ["indices", "40", "4x4"],
    ),
    (
        "unpool output_size",
        lambda: F.max_unpool2d(mt.ones(1, 1, 2, 2), IDX, 2, output_size=(7, 7)),
        lambda: tF.max_unpool2d(torch.ones(1, 1, 2, 2), TIDX, 2, output_size=(7, 7)),
        ValueError,
        ["output_size", "(7, 7)", "between 2 and 6"],
    ),
    (
        "unpool float indices",
        lambda: F.max_unpool2d(mt.ones(1, 1, 2, 2), mt.zeros(1, 1, 2, 2), 2),
        lambda: tF.max_unpool2d(torch.ones(1, 1, 2, 2), torch.zeros(1, 1, 2, 2), 2),
        TypeError,
        ["indices", "int64"],
    ),
    (
        "batch norm channels",
        lambda: nn.BatchNorm2d(4)(X4),
        lambda: torch.nn.BatchNorm2d(4)(T4),
        ValueError,
        ["num_features=4", "dim=1", "(2, 3, 5, 5)"],
    ),
    (
        "batch norm rank",
        lambda: nn.BatchNorm2d(3)(mt.ones(3, 5, 5)),
        lambda: torch.nn.BatchNorm2d(3)(torch.ones(3, 5, 5)),
        ValueError,
        ["4D", "(3, 5, 5)"],
    ),
    (
        "batch norm 1d rank",
        lambda: nn.BatchNorm1d(3)(X4),
        lambda: torch.nn.BatchNorm1d(3)(T4),
        ValueError,
        ["2D or 3D", "(2, 3, 5, 5)"],
    ),
    (
        "batch norm one value per channel",
        lambda: nn.BatchNorm1d(3)(mt.ones(1, 3)),
        lambda: torch.nn.BatchNorm1d(3)(torch.ones(1, 3)),
        ValueError,
        ["more than 1 value per channel", "(1, 3)"],
    ),
    (
        "F.batch_norm running_mean size",
        lambda: F.batch_norm(X4, mt.zeros(4), mt.ones(4), training=True),
        lambda: tF.batch_norm(T4, torch.zeros(4), torch.ones(4), training=True),
        ValueError,
        ["running_mean", "C=3", "got 4"],
    ),
    (
        "F.batch_norm weight size",
        lambda: F.batch_norm(X4, mt.zeros(3), mt.ones(3), weight=mt.ones(4)),
        lambda: tF.batch_norm(T4, torch.zeros(3), torch.ones(3), weight=torch.ones(4)),
        ValueError,
        ["weight", "C=3", "got 4"],
    ),
    (
        "F.batch_norm evaluation without statistics",
        lambda: F.batch_norm(X4, None, None),
        lambda: tF.batch_norm(T4, None, None),
        ValueError,
        ["running_mean", "evaluation"],
    ),
    (
        "group norm groups",
        lambda: nn.GroupNorm(2, 3),
        lambda: torch.nn.GroupNorm(2, 3),
        ValueError,
        ["num_channels (3)", "num_groups (2)"],
    ),
    (
        "group norm input channels",
        lambda: nn.GroupNorm(2, 4)(X4),
        lambda: torch.nn.GroupNorm(2, 4)(T4),
        ValueError,
        ["divisible", "num_groups=2", "(2, 3, 5, 5)"],
    ),
    (
        "instance norm rank",
        lambda: nn.InstanceNorm2d(3)(mt.ones(5, 5)),
        lambda: torch.nn.InstanceNorm2d(3)(torch.ones(5, 5)),
        ValueError,
        ["3D", "4D", "(5, 5)"],
    ),
    (
        "instance norm one position",
        lambda: F.instance_norm(mt.ones(2, 3, 1)),
        lambda: tF.instance_norm(torch.ones(2, 3, 1)),
        ValueError,
        ["more than 1 spatial element", "(2, 3, 1)"],
    ),
    (
        "local response norm rank",
        lambda: nn.LocalResponseNorm(2)(mt.ones(3, 4)),
        lambda: torch.nn.LocalResponseNorm(2)(torch.ones(3, 4)),
        ValueError,
        ["at least 3 dims", "(3, 4)"],
    ),
    (
        "pixel shuffle channels",
        lambda: F.pixel_shuffle(mt.ones(1, 7, 2, 2), 2),
        lambda: tF.pixel_shuffle(torch.ones(1, 7, 2, 2), 2),
        ValueError,
        ["divisible", "upscale_factor^2 = 4", "(1, 7, 2, 2)"],
    ),
    (
        "pixel unshuffle height",
        lambda: F.pixel_unshuffle(mt.ones(1, 1, 3, 4), 2),
        lambda: tF.pixel_unshuffle(torch.ones(1, 1, 3, 4), 2),
        ValueError,
        ["height", "downscale_factor=2", "(1, 1, 3, 4)"],
    ),
    (
        "interpolate size and scale",
        lambda: F.interpolate(X4, size=3, scale_factor=2),
        lambda: tF.interpolate(T4, size=3, scale_factor=2),
        ValueError,
        ["only one of size or scale_factor"],
    ),
    (
        "interpolate neither",
        lambda: F.interpolate(X4),
        lambda: tF.interpolate(T4),
        ValueError,
        ["either size or scale_factor"],
    ),
    (
        "interpolate mode and rank",
        lambda: F.interpolate(X3, scale_factor=2, mode="bilinear"),
        lambda: tF.interpolate(T3, scale_factor=2, mode="bilinear"),
        ValueError,
        ["'bilinear'", "4-D", "(2, 3, 5)"],
    ),
    (
        "interpolate align_corners with nearest",
        lambda: F.interpolate(X4, scale_factor=2, align_corners=True),
        lambda: tF.interpolate(T4, scale_factor=2, align_corners=True),
        ValueError,
        ["align_corners", "'nearest'"],
    ),
    (
        "interpolate empty output",
        lambda: F.interpolate(X4, scale_factor=0.1),
        lambda: tF.interpolate(T4, scale_factor=0.1),
        ValueError,
        ["positive", "H: 5", "H: 0"],
    ),
    (
        "interpolate size per dim",
        lambda: F.interpolate(X4, size=(2, 3, 4)),
        lambda: tF.interpolate(T4, size=(2, 3, 4)),
        ValueError,
        ["size", "2 (one per spatial dim", "(2, 3, 4)"],
    ),
    (
        "reflect pad too large",
        lambda: F.pad(X4, (5, 5, 1, 1), mode="reflect"),
        lambda: tF.pad(T4, (5, 5, 1, 1), mode="reflect"),
        ValueError,
        ["reflect", "(5, 5)", "dim 3", "size 5"],
    ),
    (
        "circular pad wraps twice",
        lambda: F.pad(X3, (6, 0), mode="circular"),
        lambda: tF.pad(T3, (6, 0), mode="circular"),
        ValueError,
        ["circular", "(6, 0)", "more than once", "5"],
    ),
    (
        "pad modes' ranks",
        lambda: F.pad(X4, (1, 1), mode="replicate"),
        lambda: tF.pad(T4, (1, 1), mode="replicate"),
        ValueError,
        ["'replicate'", "length 2", "2-D or 3-D", "(2, 3, 5, 5)"],
    ),
    ("dropout probability", lambda: nn.Dropout2d(1.5), lambda: torch.nn.Dropout2d(1.5), ValueError, ["p", "1.5"]),
]


@pytest.fixture
def kernels_refused(monkeypatch):
    """Every kernel of these layers fails if it is reached."""
    names = [
        "max_pool",
        "window_mean",
        "window_mean_transpose",
        "batch_norm_stats",
        "batch_norm_forward",
        "batch_norm_backward",
        "resample",
        "resample_transpose",
        "gather",
        "scatter",
        "scatter_add",
    ]
    for name in names:
        monkeypatch.setattr(backend, name, lambda *a, _name=name, **k: pytest.fail(f"backend.{_name} ran"))


@pytest.mark.parametrize("name,ours,theirs,error,words", CASES, ids=[c[0] for c in CASES])
def test_refused_naming_argument_and_values(name, ours, theirs, error, words, kernels_refused) -> None:
    with pytest.raises(Exception):  # noqa: B017, PT011  (PyTorch refuses it as well, with its own type)
        theirs()
    with pytest.raises(error) as info:
        ours()
    for word in words:
        assert word in str(info.value), f"{word!r} not in {info.value}"


def test_a_refused_batch_changes_no_running_statistic() -> None:
    bn = nn.BatchNorm2d(3)
    before = {k: v.numpy().copy() for k, v in bn.state_dict().items()}
    with pytest.raises(TypeError, match="dtype"):
        bn(mt.ones(2, 3, 2, 2, dtype=mt.float64))  # a float64 batch into a float32 layer
    with pytest.raises(ValueError):
        bn(mt.ones(2, 4, 2, 2))
    for k, v in bn.state_dict().items():
        np.testing.assert_array_equal(v.numpy(), before[k], err_msg=k)
