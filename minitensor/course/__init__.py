"""A course kit built from minitensor: workbooks, an autograder, notebooks (see docs/course.md).

``python -m minitensor.course list | new DIR | check DIR | solutions DIR | notebooks OUTDIR``.

Layout: ``tasks/`` (one file per task: the solution text with the student's parts
marked, its checks, its classic wrong answers), ``ops.py`` (minitensor Functions that
call a workbook's code), ``engine_adapter.py`` (the student's engine on minitensor's
graph), ``diagnose.py`` (a gradient check that names the bug), ``grader.py`` (checks and
scores, never running a student's code), ``sandbox.py`` (the processes that do run it:
the isolation model), ``child.py`` and ``probes.py`` (what those processes do),
``wire.py`` (the plain data between them), ``report.py``, ``milestone.py`` (the demo
Transformer trained on a workbook), ``notebooks.py``, ``cli.py``.
"""

from .grader import grade
from .report import json_report, text_report
from .sandbox import Limits
from .tasks import TASKS

__all__ = ["TASKS", "Limits", "grade", "json_report", "text_report"]
