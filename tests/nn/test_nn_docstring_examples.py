"""The docstring examples of the nn modules run (``>>>`` lines with ``mt``, ``nn``, ``F`` and ``np`` in scope)."""

from __future__ import annotations

import doctest
import importlib

import numpy as np
import pytest

import minitensor as mt
import minitensor.nn as nn
import minitensor.nn.functional as F

MODULES = [
    "minitensor.nn.module",
    "minitensor.nn.parameter",
    "minitensor.nn.container",
    "minitensor.nn.linear",
    "minitensor.nn.normalization",
    "minitensor.nn.bilinear",
    "minitensor.nn.rms_norm",
    "minitensor.nn.dropout",
    "minitensor.nn.activation",
    "minitensor.nn.embedding",
    "minitensor.nn.init",
    "minitensor.nn.functional.linear",
    "minitensor.nn.functional.normalization",
    "minitensor.nn.functional.dropout",
    "minitensor.nn.functional.embedding",
    "minitensor.nn.functional.activation",
    "minitensor.ops.special",
    "minitensor.nn.functional.attention",
    "minitensor.nn.attention",
    "minitensor.nn.transformer",
    "minitensor.nn.transformer_encoder",
    "minitensor.nn.transformer_decoder",
]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples_run(name):
    module = importlib.import_module(name)
    flags = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE
    result = doctest.testmod(module, extraglobs={"mt": mt, "nn": nn, "F": F, "np": np}, optionflags=flags)
    assert result.attempted > 0 and result.failed == 0
