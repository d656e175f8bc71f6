"""The course kit's command line: list, new, check (text, JSON, exit code), solutions."""

from __future__ import annotations

import inspect
import json
import subprocess
import sys
from pathlib import Path

import pytest

from minitensor.course.cli import main
from minitensor.course.tasks import TASKS
from minitensor.course.workbook import load_text

REQUIRED = ["elementwise", "broadcasting", "reductions", "matmul", "indexing", "softmax", "layer_norm", "engine",
            "cross_entropy", "attention", "adam", "transformer", "forward_mode", "conv2d"]  # fmt: skip


def test_the_module_runs_and_its_exit_status_is_the_verdict(tmp_path: Path) -> None:
    command = [sys.executable, "-m", "minitensor.course"]
    root = Path(__file__).resolve().parents[2]
    listed = subprocess.run([*command, "list"], capture_output=True, text=True, cwd=root, check=False)
    assert listed.returncode == 0 and "transformer" in listed.stdout
    subprocess.run([*command, "new", str(tmp_path)], capture_output=True, cwd=root, check=True)
    checked = subprocess.run([*command, "check", str(tmp_path), "--task", "adam"], capture_output=True, text=True,
                             cwd=root, check=False)  # fmt: skip
    assert checked.returncode == 1 and "Total: 0/10 points" in checked.stdout


def test_list_shows_the_tasks_with_their_points(capsys) -> None:
    assert main(["list"]) == 0
    out = capsys.readouterr().out
    for name in REQUIRED:
        assert name in out
    assert out.splitlines()[-1].split() == ["total", str(sum(t.points for t in TASKS))]


def test_new_writes_stubs_that_import_and_raise(tmp_path: Path) -> None:
    assert main(["new", str(tmp_path / "wb"), "--classroom"]) == 0
    for task in TASKS:
        path = tmp_path / "wb" / f"{task.name}.py"
        module = load_text(task.name, path.read_text(), str(path))
        functions = [f for n, f in vars(module).items() if inspect.isfunction(f) and not n.startswith("_")]
        assert functions, task.name
        for f in functions:
            assert f.__doc__ and len(f.__doc__) > 30, f"{task.name}.{f.__name__} has no task statement"
            with pytest.raises(NotImplementedError):
                f(*[None] * len(inspect.signature(f).parameters))
        assert "BEGIN SOLUTION" not in path.read_text()
    grading = json.loads((tmp_path / "wb" / ".github/classroom/autograding.json").read_text())
    assert [t["points"] for t in grading["tests"]] == [t.points for t in TASKS]
    assert grading["tests"][0]["run"] == "python -I -m minitensor.course check . --task elementwise"


def test_new_refuses_to_overwrite_a_students_work(tmp_path: Path) -> None:
    assert main(["new", str(tmp_path), "--tasks", "matmul"]) == 0
    (tmp_path / "matmul.py").write_text("# my work\n")
    with pytest.raises(SystemExit, match="--force"):
        main(["new", str(tmp_path), "--tasks", "matmul"])
    assert (tmp_path / "matmul.py").read_text() == "# my work\n"
    with pytest.raises(SystemExit, match="unknown task"):
        main(["new", str(tmp_path / "x"), "--tasks", "nope"])


def test_fresh_stubs_score_zero_and_solutions_full_marks(tmp_path: Path, capsys) -> None:
    main(["new", str(tmp_path / "stubs")])
    main(["solutions", str(tmp_path / "sol")])
    assert main(["check", str(tmp_path / "stubs"), "--json", str(tmp_path / "stubs.json")]) == 1
    stubs = json.loads((tmp_path / "stubs.json").read_text())
    assert stubs["score"] == 0 and stubs["extra_data"]["max_score"] == sum(t.points for t in TASKS)
    assert all("not implemented yet" in t["output"] for t in stubs["tests"])
    assert main(["check", str(tmp_path / "sol"), "--json", str(tmp_path / "sol.json")]) == 0
    report = json.loads((tmp_path / "sol.json").read_text())
    assert report["score"] == report["extra_data"]["max_score"] == sum(t.points for t in TASKS)
    assert set(report) == {"score", "output", "extra_data", "tests"}  # fields Gradescope defines
    for test in report["tests"]:
        assert set(test) == {"name", "score", "max_score", "status", "output", "extra_data"}
        assert test["score"] == test["max_score"] and test["status"] == "passed"
    assert any("milestone" in t["name"] for t in report["tests"])
    assert f"Total: {report['score']}/{report['score']} points" in capsys.readouterr().out


def test_check_one_task_and_a_broken_file(tmp_path: Path, capsys) -> None:
    main(["new", str(tmp_path)])
    matmul = next(t for t in TASKS if t.name == "matmul")
    (tmp_path / "matmul.py").write_text(matmul.solution_text())
    assert main(["check", str(tmp_path), "--task", "matmul"]) == 0
    (tmp_path / "matmul.py").write_text("def matmul_backward(grad, a, b:\n")
    assert main(["check", str(tmp_path), "--task", "matmul", "elementwise"]) == 1
    out = capsys.readouterr().out
    assert "matmul.py could not be loaded: SyntaxError" in out and "matmul  0/10 points" in out
    with pytest.raises(SystemExit, match="not a directory"):
        main(["check", str(tmp_path / "missing")])


def test_the_milestone_needs_every_file(tmp_path: Path, capsys) -> None:
    main(["solutions", str(tmp_path), "--tasks", "transformer"])
    assert main(["check", str(tmp_path), "--task", "transformer"]) == 1
    out = capsys.readouterr().out
    assert "the milestone trains on all your tasks: elementwise.py is missing" in out
    assert "equals nn.TransformerEncoderLayer  4/4" in out  # the other checks use the reference parts
