"""The examples in the course kit's docstrings run and show what they print."""

from __future__ import annotations

import doctest

import numpy as np
import pytest

from minitensor.course import notebooks, probes, wire


@pytest.mark.parametrize("module", [wire, probes, notebooks], ids=lambda m: m.__name__)
def test_docstring_examples(module) -> None:
    result = doctest.testmod(module, extraglobs={"np": np}, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0 and result.failed == 0
