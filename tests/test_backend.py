"""``minitensor/backend.py``, the wall: above it nothing imports ``kernels/``; each of its names is a
documented array function; the choices an op used to make (kernel or NumPy by dtype) live below it."""

from __future__ import annotations

import ast
import doctest
import inspect
import pathlib

import numpy as np
import pytest

import minitensor as mt
from minitensor import backend

PACKAGE = pathlib.Path(mt.__file__).parent
# Modules that may import kernels/: the backend itself and the package's face (the JIT and thread
# switches, malloc's settings at import).
WALL = {"backend.py", "__init__.py"}
# Files still importing kernels/ directly, until they are switched to the backend (the Transformer
# layers being restructured meanwhile).  This list may only shrink.
PENDING: set = set()  # (files allowed to import kernels/ until they switch to the backend: none left)


def _kernel_importers() -> set:
    """Files of the package outside kernels/ with an import (at any level) of minitensor.kernels."""
    found = set()
    for path in PACKAGE.rglob("*.py"):
        relative = path.relative_to(PACKAGE).as_posix()
        if relative.startswith("kernels/"):
            continue
        depth = len(path.relative_to(PACKAGE).parts)  # (the level of ``..`` that reaches the package)
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom):
                absolute = node.level == 0 and (node.module or "").startswith("minitensor.kernels")
                relative_import = node.level == depth and (node.module or "").startswith("kernels")
                if absolute or relative_import:
                    found.add(relative)
            elif isinstance(node, ast.Import) and any(a.name.startswith("minitensor.kernels") for a in node.names):
                found.add(relative)
    return found


def test_only_the_backend_imports_the_kernels() -> None:
    importers = _kernel_importers()
    assert "autograd/engine.py" not in importers
    assert importers - WALL <= PENDING, (
        f"import the backend instead of kernels/ in {sorted(importers - WALL - PENDING)}"
    )
    assert "backend.py" in importers  # (the check sees imports at all)


def test_every_name_is_a_documented_function() -> None:
    names = [n for n in vars(backend) if not n.startswith("_") and n not in ("annotations", "np")]
    assert len(names) > 80
    for name in names:
        value = getattr(backend, name)
        assert callable(value) and not inspect.isclass(value) and not inspect.ismodule(value), name
        assert (value.__doc__ or "").strip(), f"backend.{name} has no docstring"


@pytest.mark.parametrize("name", ["exp", "log", "tanh", "sigmoid", "relu"])
def test_elementwise_functions_take_any_dtype(jit_path, name) -> None:
    """The float-only kernels fall back to NumPy's formulas for other dtypes inside the backend."""
    ints = np.array([-2, 0, 3])
    expected = {
        "exp": np.exp(ints),
        "log": np.log(np.array([1, 2, 3])),
        "tanh": np.tanh(ints),
        "sigmoid": (1 / (1 + np.exp(-ints))).astype(ints.dtype),
        "relu": np.maximum(ints, 0),
    }[name]
    got = getattr(backend, name)(np.array([1, 2, 3]) if name == "log" else ints)
    np.testing.assert_array_equal(got, expected)
    assert got.dtype == expected.dtype
    x = np.linspace(0.5, 2.0, 6, dtype=np.float32).reshape(2, 3)
    y = getattr(backend, name)(x)
    assert y.shape == x.shape and y.dtype == np.float32
    reference = {"exp": np.exp, "log": np.log, "tanh": np.tanh, "relu": lambda v: np.maximum(v, 0)}
    reference["sigmoid"] = lambda v: 1 / (1 + np.exp(-v))
    np.testing.assert_allclose(y, reference[name](x), rtol=1e-6)


def test_sum_to_shape_undoes_broadcasting(jit_path, rng) -> None:
    grad = rng.standard_normal((4, 3, 5)).astype(np.float32)
    for shape in [(3, 5), (5,), (3, 1), (1, 5), (4, 1, 1), ()]:
        lead = grad.ndim - len(shape)
        axes = tuple(range(lead)) + tuple(lead + i for i, n in enumerate(shape) if n == 1)
        got = backend.sum_to_shape(grad, shape)
        assert got.shape == shape and got.dtype == np.float32
        np.testing.assert_allclose(got, grad.sum(axis=axes).reshape(shape), rtol=1e-5, atol=1e-5)
    assert backend.sum_to_shape(np.ones((0, 3)), (3,)).tolist() == [0.0, 0.0, 0.0]
    np.testing.assert_allclose(backend.sum_to_shape(grad.transpose(1, 0, 2), (4, 5)), grad.sum(axis=1))


def test_docstring_examples() -> None:
    result = doctest.testmod(backend, extraglobs={"np": np}, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0 and result.failed == 0
