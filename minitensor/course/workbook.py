"""A workbook: one Python file per task, loaded as modules (the student's, or the reference ones).

``reference_workbook()`` holds the solutions; ``mixed(task_name, module)`` is the
reference workbook with one task's module replaced, so each task is graded on its own
(a stub elsewhere never costs points here).  ``load_directory(path)`` reads a
student's directory: each task's file as a module, or the error that loading it raised.
"""

from __future__ import annotations

import functools
import itertools
import sys
import traceback
from pathlib import Path
from types import ModuleType, SimpleNamespace

from .tasks import TASKS

_counter = itertools.count()


def load_text(name: str, text: str, path: str = "<workbook>") -> ModuleType:
    """A fresh module named ``workbook_<name>_<n>`` from source ``text``."""
    module = ModuleType(f"workbook_{name}_{next(_counter)}")
    module.__file__ = path
    sys.modules[module.__name__] = module  # (dataclasses and pickling look modules up here)
    exec(compile(text, path, "exec"), module.__dict__)
    return module


@functools.cache
def reference_workbook() -> SimpleNamespace:
    """Every task's module, from its solution."""
    return SimpleNamespace(**{t.name: load_text(t.name, t.solution_text(), f"<solution {t.name}>") for t in TASKS})


def mixed(name: str, module: ModuleType, own: SimpleNamespace | None = None) -> SimpleNamespace:
    """The reference workbook with ``module`` as task ``name``; ``own``: the student's full workbook."""
    wb = SimpleNamespace(**vars(reference_workbook()))
    setattr(wb, name, module)
    wb.own = own if own is not None else wb
    return wb


def load_directory(directory: Path) -> SimpleNamespace:
    """Each task's module from ``directory/<task>.py``, or the error message loading it gave."""
    modules = {}
    for task in TASKS:
        path = Path(directory) / f"{task.name}.py"
        if not path.exists():
            modules[task.name] = f"{path.name} is missing"
            continue
        try:
            modules[task.name] = load_text(task.name, path.read_text(encoding="utf-8"), str(path))
        except Exception as error:  # a syntax error, an import error... in the student's file
            last = traceback.format_exception_only(type(error), error)[-1].strip()
            modules[task.name] = f"{path.name} could not be loaded: {last}"
    return SimpleNamespace(**modules)
