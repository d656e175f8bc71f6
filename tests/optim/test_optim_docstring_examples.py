"""The examples in the docstrings of minitensor.optim run and print what they show."""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import minitensor as mt
from minitensor.optim import lr_scheduler

MODULES = [
    name
    for package in (mt.optim, lr_scheduler)
    for _, name, _ in pkgutil.iter_modules(package.__path__, package.__name__ + ".")
]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples_run(name):
    module = importlib.import_module(name)
    params = [mt.zeros(2, requires_grad=True), mt.zeros(3, requires_grad=True)]
    names = {n: getattr(lr_scheduler, n) for n in lr_scheduler.__all__}  # (class examples use their neighbours)
    globs = {"mt": mt, "opt": mt.optim.SGD(params, lr=0.1), "val_loss": 0.5, **names}
    result = doctest.testmod(module, extraglobs=globs, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0
