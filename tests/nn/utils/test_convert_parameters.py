"""nn/utils/convert_parameters.py: ``parameters_to_vector`` (against PyTorch, and differentiable) and
``vector_to_parameters`` (and its size check)."""

from __future__ import annotations

import numpy as np
import pytest

import minitensor as mt
from minitensor.autograd import gradcheck
from minitensor.nn.utils import parameters_to_vector, vector_to_parameters


def test_parameters_to_vector_and_back() -> None:
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(2)
    values = [rng.standard_normal(shape) for shape in ((2, 3), (4,))]
    ours = [mt.tensor(v, dtype=mt.float64, requires_grad=True) for v in values]
    theirs = [torch.tensor(v) for v in values]
    vec = parameters_to_vector(ours)
    assert vec.tolist() == torch.nn.utils.parameters_to_vector(theirs).tolist()
    weights = mt.tensor(np.random.default_rng(3).standard_normal(10))
    assert gradcheck(lambda a, b: parameters_to_vector([a, b]) * weights, ours)
    new = mt.arange(10.0, dtype=mt.float64)
    with mt.no_grad():
        vector_to_parameters(new, ours)
    assert ours[0].tolist() == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]] and ours[1].tolist() == [6.0, 7.0, 8.0, 9.0]
    with pytest.raises(ValueError, match="vec has 3 elements, the parameters hold 10"):
        vector_to_parameters(mt.zeros(3), ours)
