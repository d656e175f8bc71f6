"""A workbook: one Python file per task, loaded as modules (the student's, or the reference ones).

The grader only reads a student's files (``read_directory``): their text goes to the
child process that runs them (child.py), where ``load_sources`` turns each into a
module, or into the message of the error loading it raised.  ``reference_workbook()``
holds the solutions; ``mixed(task_name, module)`` is the reference workbook with one
task's module replaced, so each task is graded on its own (a stub elsewhere never
costs points there).
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


def read_directory(directory: Path) -> dict:
    """``{task: (path, text)}`` of the files in ``directory``, or ``{task: "x.py is missing"}`` (nothing runs)."""
    sources = {}
    for task in TASKS:
        path = Path(directory) / f"{task.name}.py"
        try:
            sources[task.name] = (str(path), path.read_text(encoding="utf-8", errors="replace"))
        except OSError:
            sources[task.name] = f"{path.name} is missing" if not path.exists() else f"{path.name} cannot be read"
    return sources


def load_sources(sources: dict) -> SimpleNamespace:
    """Each ``{task: (path, text)}`` as a module, or as the message of the error loading it raised.

    Runs the student's code: called only in a child process (child.py).
    """
    modules = {}
    for name, (path, text) in sources.items():
        try:
            modules[name] = load_text(name, text, path)
        except BaseException as error:  # a syntax error, an import error, sys.exit()... in the student's file
            last = traceback.format_exception_only(type(error), error)[-1].strip()
            modules[name] = f"{Path(path).name} could not be loaded: {last}"
    return SimpleNamespace(**modules)
