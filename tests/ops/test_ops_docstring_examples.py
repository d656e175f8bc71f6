"""The docstring examples of the op modules of the math, reductions, building, linear-algebra and norm families run
and give what they show (``>>>`` lines with ``mt`` and ``np`` in scope)."""

from __future__ import annotations

import doctest
import importlib

import numpy as np
import pytest

import minitensor as mt

MODULES = """arguments trig hyperbolic special gamma binary_math order_stats scan statistics counting diagonal products
grids selection reorder matrices solve determinant decompositions matrix_functions method_forms group_norm
rms_norm cdist""".split()


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples_run(name):
    module = importlib.import_module(f"minitensor.ops.{name}")
    flags = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE
    result = doctest.testmod(module, extraglobs={"mt": mt, "np": np}, optionflags=flags)
    assert result.attempted > 0 and result.failed == 0
