"""The one-pass Adam kernel and its NumPy reference (kernels/adam.py) give the same bits."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import minitensor as mt
from minitensor.kernels import adam


def _state(rng, n: int, dtype, amsgrad: bool) -> list:
    arrays = [rng.standard_normal(n), rng.standard_normal(n), rng.standard_normal(n), rng.random(n)]
    if amsgrad:
        arrays.append(rng.random(n))
    arrays = [a.astype(dtype) for a in arrays]
    arrays[1][:3] = [np.nan, np.inf, 0.0]  # a NaN, an inf and a zero gradient
    return arrays


def _run(arrays: list, jit: bool, **settings) -> list:
    arrays = [a.copy() for a in arrays]
    v_max = arrays[4] if len(arrays) == 5 else None
    with mt.jit_disabled() if not jit else _nothing():
        for step in (1, 2, 3):
            adam.adam_update(*arrays[:4], v_max, step=step, **settings)
    return arrays


class _nothing:
    def __enter__(self):
        mt.set_jit_enabled(True)

    def __exit__(self, *exc):
        pass


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize(
    "amsgrad, maximize, decoupled, weight_decay",
    list(itertools.product([False, True], [False, True], [False, True], [0.0, 0.1])),
)
def test_kernel_and_reference_agree_bit_for_bit(dtype, amsgrad, maximize, decoupled, weight_decay) -> None:
    previous = mt.jit_enabled()
    try:
        arrays = _state(np.random.default_rng(0), 37, dtype, amsgrad)
        settings = dict(
            lr=0.01, betas=(0.9, 0.99), eps=1e-6, weight_decay=weight_decay, decoupled=decoupled, maximize=maximize
        )
        ours, reference = _run(arrays, True, **settings), _run(arrays, False, **settings)
    finally:
        mt.set_jit_enabled(previous)
    for a, b in zip(ours, reference):
        np.testing.assert_array_equal(a, b)
    assert not np.array_equal(ours[0], arrays[0])  # the parameter moved


def test_a_non_contiguous_parameter_takes_the_reference() -> None:
    rng = np.random.default_rng(1)
    base = rng.standard_normal((6, 4)).astype(np.float32)
    param = base.T  # a transposed view: the kernel would need a copy, and the update would be lost
    grad, m, v = (rng.standard_normal((4, 6)).astype(np.float32) for _ in range(3))
    expected = param.copy()
    with mt.jit_disabled():
        adam.adam_update(expected, grad, m.copy(), np.abs(v), None, lr=0.1, betas=(0.9, 0.999), eps=1e-8,
                         weight_decay=0.0, decoupled=False, maximize=False, step=1)  # fmt: skip
    adam.adam_update(param, grad, m, np.abs(v), None, lr=0.1, betas=(0.9, 0.999), eps=1e-8,
                     weight_decay=0.0, decoupled=False, maximize=False, step=1)  # fmt: skip
    np.testing.assert_array_equal(base.T, expected)


def test_docstring_example() -> None:
    import doctest

    result = doctest.testmod(adam, extraglobs={"np": np})
    assert result.attempted > 0 and result.failed == 0


@pytest.mark.parametrize("shape", [(5, 7), (2, 3, 4), ()])
@pytest.mark.parametrize("amsgrad", [False, True])
def test_parameters_of_any_shape_take_the_kernel_and_match_the_reference(shape, amsgrad, monkeypatch) -> None:
    previous = mt.jit_enabled()
    try:
        size = int(np.prod(shape))
        arrays = [a[:size].reshape(shape) for a in _state(np.random.default_rng(2), max(size, 3), "float32", amsgrad)]
        settings = dict(lr=0.01, betas=(0.9, 0.99), eps=1e-6, weight_decay=0.1, decoupled=True, maximize=False)
        reference = _run(arrays, False, **settings)
        monkeypatch.setattr(adam, "_adam_numpy", None)  # (the kernel must run: the reference is gone)
        ours = _run(arrays, True, **settings)
    finally:
        mt.set_jit_enabled(previous)
    assert ours[0].shape == shape
    for a, b in zip(ours, reference):
        np.testing.assert_array_equal(a, b)
    assert not np.array_equal(ours[0], arrays[0])
