"""The examples in the kernel modules' docstrings run and give what they show."""

from __future__ import annotations

import doctest

import numpy as np
import pytest

from minitensor.kernels import (
    _exp,
    _log,
    _sum,
    activation,
    along_dim,
    attention,
    attention_softmax,
    bce,
    bessel,
    column_sums,
    cumsum,
    divergence,
    dot_tiles,
    erf,
    exp2,
    exp_log,
    expm1,
    extremum,
    flip,
    gamma,
    gelu,
    hyperbolic,
    inverse_trig,
    layer_norm,
    log1p,
    logaddexp,
    logit,
    lu,
    pointwise,
    softmax,
    softplus,
    tanh,
    topk,
    triangle,
    trig,
    where,
)
from minitensor.kernels.runtime import blas, blas_threads, cpu, dispatch, shared_types

MODULES = [
    blas,
    blas_threads,
    _exp,
    activation,
    attention,
    attention_softmax,
    extremum,
    layer_norm,
    softmax,
    along_dim,
    cumsum,
    flip,
    gamma,
    topk,
    triangle,
]
MODULES += [attention_softmax, _log, _sum, bce, divergence, gelu, pointwise, softplus, where]
MODULES += [exp2, exp_log, expm1, log1p, tanh, trig, dispatch, erf, column_sums, gamma, bessel, cpu, dot_tiles]
MODULES += [shared_types, hyperbolic, inverse_trig, lu, logit, logaddexp]


@pytest.mark.parametrize("module", MODULES, ids=lambda m: m.__name__)
def test_docstring_examples(module) -> None:
    result = doctest.testmod(module, extraglobs={"np": np}, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0 and result.failed == 0
