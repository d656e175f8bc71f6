"""sinh, cosh, asinh, acosh, atanh and the arc* aliases (ops/hyperbolic.py): float64 gradcheck, second order
and PyTorch as the oracle."""

from __future__ import annotations

import numpy as np
import pytest
from op_checks import check_op

import minitensor as mt

rng = np.random.default_rng(12)
DOMAINS = {"sinh": rng.standard_normal((2, 3)), "cosh": rng.standard_normal((2, 3)),
           "asinh": 2 * rng.standard_normal((2, 3)), "acosh": rng.uniform(1.2, 3.0, (2, 3)),
           "atanh": rng.uniform(-0.8, 0.8, (2, 3))}  # fmt: skip


@pytest.mark.parametrize("name", list(DOMAINS))
def test_functions_and_methods(name):
    check_op(lambda x: getattr(mt, name)(x), lambda x: getattr(x, name)(), DOMAINS[name])
    check_op(lambda x: getattr(x, name)(), lambda x: getattr(x, name)(), DOMAINS[name])


@pytest.mark.parametrize("alias, name", [("arcsinh", "asinh"), ("arccosh", "acosh"), ("arctanh", "atanh")])
def test_aliases_are_the_same_functions(alias, name):
    assert getattr(mt, alias) is getattr(mt, name)
    x = mt.tensor(DOMAINS[name])
    assert getattr(x, alias)().tolist() == getattr(x, name)().tolist()


def test_edges_as_pytorch():
    torch = pytest.importorskip("torch")
    edge = np.array([-1.0, 1.0, 2.0, 0.5, 1000.0])
    for name in ("atanh", "acosh", "cosh"):
        ours = getattr(mt, name)(mt.tensor(edge, dtype=mt.float64)).numpy()
        np.testing.assert_allclose(ours, getattr(torch, name)(torch.tensor(edge)).numpy(), equal_nan=True)
    assert mt.sinh(mt.tensor([1, 2])).dtype == mt.float32
