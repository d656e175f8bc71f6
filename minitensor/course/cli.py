"""``python -m minitensor.course``: list the tasks, write workbooks, grade them, write notebooks.

list                              the tasks, their points and what each asks
new DIR [--tasks T ...] [--classroom]   a student workbook (stubs); --classroom adds
                                  .github/classroom/autograding.json (one test per task)
check DIR [--task T ...] [--json OUT] [--time-limit [T=]S ...] [--memory-limit MIB]
                                  grade a workbook (each task's code in a process of its own);
                                  exit status 0: every check passed, 1: some failed, 2: the
                                  grading itself failed on some check (marked ERROR)
solutions DIR [--tasks T ...]     the filled-in workbook, for teachers
notebooks OUTDIR [--docs DOCS]    the course texts (docs/*.md) as Jupyter notebooks
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from . import grader, report
from .notebooks import write_notebooks
from .sandbox import Limits
from .tasks import BY_NAME, TASKS
from .tasks._base import Task

_README = """# minitensor course workbook

One file per task.  Replace each `raise NotImplementedError(...)` with your code
(read the docstrings: they give the shapes and a hint), then grade your work:

    python -m minitensor.course check .                  # every task
    python -m minitensor.course check . --task {first}    # one task

The last task's milestone trains a small Transformer on all of your files.
"""


def _task_names(names: list[str] | None) -> list[Task]:
    unknown = [n for n in names or [] if n not in BY_NAME]
    if unknown:
        raise SystemExit(f"unknown task(s) {unknown}; the tasks are: {', '.join(t.name for t in TASKS)}")
    return [BY_NAME[n] for n in names] if names else TASKS


def _write(directory: Path, files: dict, force: bool) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    existing = [name for name in files if (directory / name).exists()]
    if existing and not force:
        raise SystemExit(f"{directory}: {existing} already exist (a student's work?); pass --force to overwrite")
    for name, text in files.items():
        (directory / name).parent.mkdir(parents=True, exist_ok=True)
        (directory / name).write_text(text, encoding="utf-8")


def autograding(tasks: list[Task]) -> dict:
    """GitHub Classroom's .github/classroom/autograding.json: one test per task, its points, exit code 0 = pass.

    The command runs in the student's repository: ``python -I`` keeps that directory off the
    import path (a student's ``numpy.py`` there would otherwise run in the grader).
    """
    tests = [{"name": t.title, "setup": "", "run": f"python -I -m minitensor.course check . --task {t.name}",
              "input": "", "output": "", "comparison": "included", "timeout": 10, "points": t.points}
             for t in tasks]  # fmt: skip
    return {"tests": tests}


def cmd_list(args: argparse.Namespace) -> int:
    print(f"{'task':<14}{'points':>6}  what")
    for week, t in enumerate(TASKS, start=1):
        print(f"{t.name:<14}{t.points:>6}  week {week}: {t.title} - {t.summary}")
    print(f"{'total':<14}{sum(t.points for t in TASKS):>6}")
    return 0


def cmd_new(args: argparse.Namespace) -> int:
    tasks = _task_names(args.tasks)
    files = {f"{t.name}.py": t.stub_text() for t in tasks}
    files["README.md"] = _README.format(first=tasks[0].name)
    if args.classroom:
        files[".github/classroom/autograding.json"] = json.dumps(autograding(tasks), indent=2) + "\n"
    _write(Path(args.dir), files, args.force)
    print(f"wrote {len(tasks)} task file(s) to {args.dir}")
    return 0


def cmd_solutions(args: argparse.Namespace) -> int:
    tasks = _task_names(args.tasks)
    _write(Path(args.dir), {f"{t.name}.py": t.solution_text() for t in tasks}, args.force)
    print(f"wrote the solutions of {len(tasks)} task(s) to {args.dir}")
    return 0


def limits(time_limits: list[str] | None, memory_mib: float | None) -> Limits:
    """``Limits`` from the ``--time-limit`` values (``SECONDS``: every task's, ``TASK=SECONDS``: one task's)
    and ``--memory-limit`` (MiB)."""
    result = Limits(memory=Limits.memory if memory_mib is None else int(memory_mib * 2**20))
    for value in time_limits or []:
        task, _, seconds = value.rpartition("=")
        try:
            number = float(seconds)
        except ValueError:
            number = -1.0
        if not number > 0 or (task and task not in BY_NAME):
            raise SystemExit(f"check: --time-limit expects SECONDS or TASK=SECONDS with SECONDS > 0 and TASK one of "
                             f"{', '.join(BY_NAME)}; got {value!r}")  # fmt: skip
        if task:
            result.per_task[task] = number
        else:
            result.time = number
    if memory_mib is not None and not memory_mib > 0:
        raise SystemExit(f"check: --memory-limit expects MiB > 0, got {memory_mib}")
    return result


def cmd_check(args: argparse.Namespace) -> int:
    if not Path(args.dir).is_dir():
        raise SystemExit(f"check: {args.dir} is not a directory")
    names = [t.name for t in _task_names(args.task)]
    results = report.pending(names)  # (the JSON report lists every check from the start)

    def record(result: grader.Result) -> None:
        at = next(i for i, r in enumerate(results) if (r.task, r.check) == (result.task, result.check))
        results[at] = result
        if args.json:
            report.write_json(results, Path(args.json))

    if args.json:
        report.write_json(results, Path(args.json))
    grader.grade(Path(args.dir), names, limits(args.time_limit, args.memory_limit), on_result=record)
    if args.json:  # (again, now that every process that ran the student's code is gone)
        report.write_json(results, Path(args.json))
    print(report.text_report(results))
    return 2 if any(r.error for r in results) else 0 if all(r.score == r.max_score for r in results) else 1


def cmd_notebooks(args: argparse.Namespace) -> int:
    try:
        paths = write_notebooks(Path(args.outdir), args.docs)
    except FileNotFoundError as error:
        raise SystemExit(str(error)) from None
    print("\n".join(str(p) for p in paths))
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m minitensor.course", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("list", help="the tasks").set_defaults(run=cmd_list)
    new = sub.add_parser("new", help="write a student workbook (stubs)")
    sol = sub.add_parser("solutions", help="write the filled-in workbook (for teachers)")
    for p, run in ((new, cmd_new), (sol, cmd_solutions)):
        p.add_argument("dir", type=Path)
        p.add_argument("--tasks", nargs="+", metavar="T", help="only these tasks (default: all)")
        p.add_argument("--force", action="store_true", help="overwrite existing files")
        p.set_defaults(run=run)
    new.add_argument("--classroom", action="store_true", help="add GitHub Classroom's autograding.json")
    check = sub.add_parser("check", help="grade a workbook")
    check.add_argument("dir", type=Path)
    check.add_argument("--task", nargs="+", metavar="T", help="only these tasks (default: all)")
    check.add_argument("--json", type=Path, metavar="OUT", help="also write Gradescope's results.json here")
    check.add_argument(
        "--time-limit",
        action="append",
        metavar="[T=]S",
        help="seconds per check (default 60), for every task or for task T; repeatable",
    )
    check.add_argument("--memory-limit", type=float, metavar="MIB", help="memory per process (default 2048 MiB)")
    check.set_defaults(run=cmd_check)
    nb = sub.add_parser("notebooks", help="the course texts as Jupyter notebooks")
    nb.add_argument("outdir", type=Path)
    nb.add_argument("--docs", type=Path, help="the docs/ folder (default: the one beside the package)")
    nb.set_defaults(run=cmd_notebooks)
    args = parser.parse_args(argv)
    return args.run(args)
