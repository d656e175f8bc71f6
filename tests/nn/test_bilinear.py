"""nn/bilinear.py: ``nn.Bilinear`` and ``F.bilinear``: PyTorch's values, gradients, second derivatives
and JVPs (batched, unbatched, extra leading dims, with and without bias), the layer's defaults, init
bound, repr and state dict, and bad arguments."""

from __future__ import annotations

import numpy as np
import pytest
from op_checks import check_op

import minitensor as mt
import minitensor.nn as nn
import minitensor.nn.functional as F

bilinear_rng = np.random.default_rng(9)
BILINEAR_W, BILINEAR_B = bilinear_rng.standard_normal((5, 3, 4)), bilinear_rng.standard_normal(5)


@pytest.mark.parametrize("lead", [(2,), (), (2, 3)], ids=str)
def test_bilinear_against_pytorch_to_second_order(lead, torch):
    x1, x2 = bilinear_rng.standard_normal((*lead, 3)), bilinear_rng.standard_normal((*lead, 4))
    check_op(F.bilinear, torch.nn.functional.bilinear, x1, x2, BILINEAR_W, BILINEAR_B)
    check_op(F.bilinear, torch.nn.functional.bilinear, x1, x2, BILINEAR_W)


def test_bilinear_layer_as_pytorch(torch):
    for bias in (True, False):
        ours, theirs = nn.Bilinear(3, 4, 5, bias), torch.nn.Bilinear(3, 4, 5, bias)
        assert repr(ours) == repr(theirs)
        assert list(ours.state_dict()) == list(theirs.state_dict())
        for name, p in ours.named_parameters():  # init: U(-1/sqrt(in1), 1/sqrt(in1))
            assert p.shape == tuple(getattr(theirs, name).shape) and np.abs(p.numpy()).max() <= 1 / np.sqrt(3)
    ours = nn.Bilinear(3, 4, 5, dtype=mt.float64)
    ours.load_state_dict({"weight": BILINEAR_W, "bias": BILINEAR_B})
    x1, x2 = bilinear_rng.standard_normal((6, 3)), bilinear_rng.standard_normal((6, 4))
    expected = torch.nn.functional.bilinear(
        torch.tensor(x1), torch.tensor(x2), torch.tensor(BILINEAR_W), torch.tensor(BILINEAR_B)
    )
    y = ours(mt.tensor(x1, dtype=mt.float64), mt.tensor(x2, dtype=mt.float64))
    np.testing.assert_allclose(y.numpy(), expected.numpy(), rtol=1e-12)


def test_bilinear_bad_arguments_raise_naming_them():
    w = mt.ones(5, 3, 4)
    with pytest.raises(ValueError, match=r"bilinear: input2's last dim must be 4 \(weight \(5, 3, 4\)\), got shape"):
        F.bilinear(mt.ones(2, 3), mt.ones(2, 3), w)
    with pytest.raises(ValueError, match="bilinear: input1 .* and input2 .* must have the same leading dims"):
        F.bilinear(mt.ones(2, 3), mt.ones(3, 4), w)
    with pytest.raises(ValueError, match=r"bilinear: weight must be 3-D"):
        F.bilinear(mt.ones(2, 3), mt.ones(2, 4), mt.ones(3, 4))
    with pytest.raises(ValueError, match=r"bilinear: bias must have shape \(5,\)"):
        F.bilinear(mt.ones(2, 3), mt.ones(2, 4), w, mt.ones(4))
    with pytest.raises(ValueError, match="Bilinear: in2_features must be positive"):
        nn.Bilinear(3, 0, 5)
