"""ops/triangular.py: ``tril`` and ``triu`` (every diagonal): values and gradients of first and second
order against PyTorch, the error cases, and the causal mask built from them."""

from __future__ import annotations

import numpy as np
import pytest
from op_checks import check_op

import minitensor as mt

X = np.random.default_rng(1).standard_normal((2, 3, 4))


@pytest.mark.parametrize("diagonal", [-2, -1, 0, 1, 3])
@pytest.mark.parametrize("name", ["tril", "triu"])
def test_tril_triu(name, diagonal):
    check_op(lambda x: getattr(mt, name)(x, diagonal), lambda x: getattr(x, name)(diagonal), X)
    check_op(lambda x: getattr(x, name)(diagonal=diagonal), lambda x: getattr(x, name)(diagonal), X[0])


def test_tril_errors_and_causal_mask():
    with pytest.raises(ValueError, match="at least 2 dims"):
        mt.tril(mt.ones(3))
    with pytest.raises(TypeError, match="diagonal must be an int"):
        mt.triu(mt.ones(3, 3), 1.0)
    mask = mt.tril(mt.ones(3, 3))  # the ng-video-lecture / nanoGPT causal mask
    assert mask.tolist() == [[1, 0, 0], [1, 1, 0], [1, 1, 1]]
