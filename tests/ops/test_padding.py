"""ops/padding.py: ``F.pad`` in every mode (constant with margins and crops, reflect, replicate,
circular): values and gradients of first and second order against PyTorch, and the error cases."""

from __future__ import annotations

import numpy as np
import pytest
from op_checks import check_op

import minitensor as mt
import minitensor.nn.functional as F

X = np.random.default_rng(1).standard_normal((2, 3, 4))


PADS = [
    ((1, 2), "constant"),
    ((1, 0, 0, 2), "constant"),
    ((-1, 2), "constant"),
    ((2, 1, 1, 3), "constant"),  # every margin filled
    ((-1, -2, 1, -1), "constant"),  # crops and a margin
    ((1, 2, 2, 1), "reflect"),
    ((2, 3), "replicate"),
    ((1, 1, 2, 0), "replicate"),
    ((1, 3), "circular"),
]


@pytest.mark.parametrize("pad,mode", PADS)
def test_pad(pad, mode):
    torch = pytest.importorskip("torch")

    def t_pad(x):
        if mode == "constant":
            return torch.nn.functional.pad(x, pad, value=0.5)
        return torch.nn.functional.pad(x, pad, mode=mode)

    value = 0.5 if mode == "constant" else None
    check_op(lambda x: F.pad(x, pad, mode=mode, value=value), t_pad, X)


def test_pad_errors():
    with pytest.raises(ValueError, match="even length"):
        F.pad(mt.ones(2, 2), (1,))
    with pytest.raises(ValueError, match="mode must be one of"):
        F.pad(mt.ones(2, 2), (1, 1), mode="wrap")
    with pytest.raises(ValueError, match="smaller than the padded dim"):
        F.pad(mt.ones(2, 2), (2, 0), mode="reflect")
