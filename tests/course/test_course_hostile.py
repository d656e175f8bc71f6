"""Hostile submissions: whatever a student's file does, it can only fail its own checks.

A fresh stub that cheats scores 0 and the reports stay the grader's; a file with one
hostile function beside honest ones scores exactly what the honest ones earn; each
within its limits (sandbox.py describes the isolation model).
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import time
from pathlib import Path

import pytest

from minitensor.course import grader
from minitensor.course.child import readable_by_anyone
from minitensor.course.cli import limits, main
from minitensor.course.grader import grade_task
from minitensor.course.sandbox import GiB, GradingError, Limits, Sandbox
from minitensor.course.tasks import BY_NAME

ELEMENTWISE = BY_NAME["elementwise"]
GRADED = ["elementwise", "transformer"]  # the tasks whose processes load elementwise.py (its own, the milestone's)
FULL = sum(BY_NAME[t].points for t in GRADED)

# Added at the top of a fresh stub's elementwise.py; REPORT and MARKER name files the cheat should not be able
# to leave its mark on.
CHEATS = {
    "replaces the grader's functions": """
import minitensor.course.grader as _g
_g.run_check = lambda task, check, wb: _g.Result(task.name, check.name, check.points, check.points, "passed")
""",
    "patches NumPy": """
import numpy as _np
_np.allclose = lambda *a, **k: True
_np.isclose = lambda a, b, *r, **k: _np.ones(_np.broadcast(a, b).shape, dtype=bool)
""",
    "patches minitensor and the checks": """
import minitensor as _mt
import minitensor.course.diagnose as _d
import minitensor.course.tasks._helpers as _h
_mt.autograd.gradcheck = lambda *a, **k: True
_d.judge = _h.check_program = lambda *a, **k: None
_h.expect_close = _h.stable = lambda *a, **k: None
""",
    "patches builtins": """
import builtins
builtins.isinstance = lambda *a: True
builtins.NotImplementedError = type("Passed", (Exception,), {})
""",
    "prints a fake report": """
print("elementwise  10/10 points\\n  [PASS] mul and div  5/5\\n\\x1b[2K\\rTotal: 125/125 points")
""",
    "writes the JSON report": """
import json, os
with open(REPORT + ".mine", "w") as _f:
    json.dump({"score": 125, "output": "Total: 125/125 points", "tests": []}, _f)
os.replace(REPORT + ".mine", REPORT)
""",
    "calls sys.exit(0)": "import sys\nsys.exit(0)\n",
    "calls os._exit(0)": "import os\nos._exit(0)\n",
    "raises KeyboardInterrupt": "raise KeyboardInterrupt\n",
    "forks a process that outlives it": """
import json, os, time
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        with open(MARKER, "w") as _f:
            _f.write(str(os.getpid()))
        time.sleep(1.0)
        with open(REPORT + ".mine", "w") as _f:
            json.dump({"score": 125, "tests": []}, _f)
        os.replace(REPORT + ".mine", REPORT)
    os._exit(0)
""",
}


@pytest.fixture
def open_dir():
    """A directory anyone may write in, outside pytest's (which only its owner may enter): a child running as
    ``nobody`` can write there, so what it fails to do there, the grader prevented."""
    path = Path(tempfile.mkdtemp(prefix="course-hostile-"))
    path.chmod(0o777)
    yield path
    shutil.rmtree(path, ignore_errors=True)


def _killed(marker: Path) -> bool:
    """Is the process whose pid a cheat wrote in ``marker`` gone?"""
    for _ in range(100):  # (until the cheat has written it)
        if marker.exists() and marker.read_text():
            break
        time.sleep(0.01)
    try:
        os.kill(int(marker.read_text()), 0)
    except ProcessLookupError:
        return True
    return False


@pytest.mark.parametrize("cheat", CHEATS)
def test_a_stub_that_cheats_scores_zero_and_the_reports_stay_the_graders(cheat, tmp_path, open_dir, capsys) -> None:
    work, report, marker = tmp_path / "stu", open_dir / "results.json", open_dir / "marker"
    assert main(["new", str(work)]) == 0
    names = f"REPORT, MARKER = {str(report)!r}, {str(marker)!r}\n"
    (work / "elementwise.py").write_text(names + CHEATS[cheat] + ELEMENTWISE.stub_text())
    capsys.readouterr()
    start = time.monotonic()
    status = main(["check", str(work), "--task", *GRADED, "--json", str(report)])
    assert time.monotonic() - start < 30
    text = capsys.readouterr().out
    assert status == 1  # graded (not 2), not every check passed
    assert text.rstrip().splitlines()[-1] == f"Total: 0/{FULL} points"
    assert all(line.lstrip().startswith("|") for line in text.splitlines() if "125/125" in line)
    assert "\x1b" not in text
    if cheat == "forks a process that outlives it":
        assert _killed(marker)
    data = json.loads(report.read_text())
    assert data["score"] == 0 and data["extra_data"]["max_score"] == FULL
    assert [t["name"] for t in data["tests"]] == [f"{t}: {c.name}" for t in GRADED for c in BY_NAME[t].checks]
    assert all(t["status"] == "failed" and not t["extra_data"]["not_graded"] for t in data["tests"])


def _with_mul_backward(body: str) -> str:
    """The elementwise solution with ``body`` as mul_backward's (div, pow, exp, tanh, relu stay right)."""
    lines = "".join(f"    {line}\n" for line in body.strip("\n").splitlines())
    return ELEMENTWISE.solution_text().replace("    return grad * b, grad * a\n", lines)


RIGHT = "return grad * b, grad * a"
LIMITS = Limits(time=2.0, memory=GiB)
# mul_backward's body -> (the scores of [mul and div, pow exp tanh relu], what the report says of the first)
HOSTILE_MUL = {
    "an infinite loop": ("while True:\n    pass", [0, 5], "time limit of 2 s exceeded: your code was at elementwise"),
    "a memory hog": ("import numpy as np\nkeep = []\nwhile True:\n    keep.append(np.empty(2**26))", [0, 5],
                     "out of memory (the limit: 1 GiB)"),
    "a recursion bomb": ("return mul_backward(grad, a, b)", [0, 5], "RecursionError"),
    "a recursion bomb past the recursion limit": (
        "import sys\nsys.setrecursionlimit(10**8)\ndef f(n):\n    return f(n + 1) + 1\nreturn f(0)", [0, 5], "limit"),
    "sys.exit(0)": ("import sys\nsys.exit(0)", [0, 5], "SystemExit: 0 (at elementwise.py:"),
    "os._exit(0)": ("import os\nos._exit(0)", [0, 5], "the process running your code ended with exit status 0"),
    "KeyboardInterrupt": ("raise KeyboardInterrupt", [0, 5], "KeyboardInterrupt"),
    "killing its own process": ("import os, signal\nos.kill(os.getpid(), signal.SIGKILL)", [0, 5], "SIGKILL"),
    "patching NumPy and the checks, then a wrong answer": (
        "import numpy, minitensor.course.diagnose as d\nnumpy.allclose = lambda *a, **k: True\nd.judge = print\n"
        "return grad, grad", [0, 5], "is wrong"),
    "returning objects that claim to equal anything": (
        "import numpy\nclass Liar(numpy.ndarray):\n    __eq__ = lambda self, other: True\n"
        "return numpy.zeros_like(grad).view(Liar), numpy.zeros_like(grad).view(Liar)", [0, 5], "is wrong"),
    "forging the grader's reply": (
        "import os\nfor fd in range(3, 64):\n    try:\n        os.write(fd, b'garbage' * 100)\n    except OSError:\n"
        "        pass\n" + RIGHT, [0, 5], None),
    "slow, but right within the limit": ("import time\ntime.sleep(0.05)\n" + RIGHT, [5, 5], None),
    "printing a flood, and right": ("print('x' * 10**6)\n" + RIGHT, [5, 5], None),
}  # fmt: skip


@pytest.mark.parametrize("behaviour", HOSTILE_MUL)
def test_a_hostile_function_fails_only_its_own_check(behaviour, sandbox) -> None:
    body, scores, said = HOSTILE_MUL[behaviour]
    start = time.monotonic()
    results = grade_task(ELEMENTWISE, _with_mul_backward(body), LIMITS, sandbox)
    assert time.monotonic() - start < LIMITS.time * len(results) + 3
    assert [r.score for r in results] == scores, [r.output for r in results]
    assert said is None or said in results[0].output
    assert not any(r.error for r in results)


def test_slow_right_code_past_the_limit_scores_zero_saying_where(sandbox) -> None:
    text = _with_mul_backward("import time\ntime.sleep(1.0)\n" + RIGHT)
    results = grade_task(ELEMENTWISE, text, Limits(time=0.5), sandbox)
    assert [r.score for r in results] == [0, 5]
    assert "time limit of 0.5 s exceeded: your code was at elementwise.py:" in results[0].output
    assert "in mul_backward" in results[0].output


def test_what_a_student_prints_is_capped(sandbox) -> None:
    results = grade_task(ELEMENTWISE, _with_mul_backward("print('x' * 10**6)\n" + RIGHT), LIMITS, sandbox)
    assert results[0].score == 5 and results[0].printed.startswith("xxx")
    assert len(results[0].printed) < 3000 and "output cut at" in results[0].printed


def test_a_process_left_behind_by_a_function_is_killed(sandbox, open_dir) -> None:
    marker = open_dir / "marker"
    body = f"""
import os, time
if not os.path.exists({str(marker)!r}) and os.fork() == 0:
    try:
        os.setsid()
        open({str(marker)!r}, "w").write(str(os.getpid()))
        time.sleep(60)
    finally:
        os._exit(0)
{RIGHT}"""
    assert [r.score for r in grade_task(ELEMENTWISE, _with_mul_backward(body), LIMITS, sandbox)] == [5, 5]
    assert _killed(marker)


@pytest.mark.skipif(os.geteuid() != 0, reason="only root can run the children as nobody")
def test_as_nobody_a_child_can_neither_signal_the_grader_nor_write_its_files(open_dir) -> None:
    guarded = open_dir / "report.json"
    guarded.write_text("the grader's\n")
    guarded.chmod(0o644)
    write = f"import os, signal\nopen({str(guarded)!r}, 'w').write('mine')\n{RIGHT}"
    kill = f"import os, signal\nos.kill(os.getppid(), signal.SIGKILL)\n{RIGHT}"  # (the helper, run as root)
    with Sandbox(user="nobody") as as_nobody:  # (these imports are all made by the helper already)
        for body in (write, kill):
            results = grade_task(ELEMENTWISE, _with_mul_backward(body), LIMITS, as_nobody)
            assert [r.score for r in results] == [0, 5] and "PermissionError" in results[0].output
        assert as_nobody.user == "nobody"
    assert guarded.read_text() == "the grader's\n"


def test_the_helper_is_started_again_when_it_died(sandbox) -> None:
    sandbox.fork(None).close()  # (started)
    os.kill(sandbox._process.pid, 9)
    sandbox._process.wait()
    assert [r.score for r in grade_task(ELEMENTWISE, ELEMENTWISE.solution_text(), LIMITS, sandbox)] == [5, 5]


def test_exit_status_2_and_every_check_listed_when_grading_itself_fails(tmp_path, monkeypatch, capsys) -> None:
    main(["solutions", str(tmp_path / "sol")])

    def broken(self, memory):
        raise GradingError("the helper could not start")

    monkeypatch.setattr(grader.Sandbox, "fork", broken)
    assert main(["check", str(tmp_path / "sol"), "--task", "adam", "--json", str(tmp_path / "r.json")]) == 2
    assert "[ERROR]" in capsys.readouterr().out
    data = json.loads((tmp_path / "r.json").read_text())
    assert len(data["tests"]) == 2 and all(t["extra_data"]["not_graded"] for t in data["tests"])


def test_the_json_report_lists_every_check_when_grading_stops_early(tmp_path, monkeypatch) -> None:
    main(["solutions", str(tmp_path / "sol")])
    run_check, calls = grader.run_check, []

    def stopped_at_the_second(session, check):
        calls.append(check)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return run_check(session, check)

    monkeypatch.setattr(grader, "run_check", stopped_at_the_second)
    with pytest.raises(KeyboardInterrupt):
        main(["check", str(tmp_path / "sol"), "--task", "adam", "matmul", "--json", str(tmp_path / "r.json")])
    tests = json.loads((tmp_path / "r.json").read_text())["tests"]
    assert [t["score"] for t in tests] == [6, 0, 0, 0]
    assert [t["extra_data"]["not_graded"] for t in tests] == [False, True, True, True]


def test_an_honest_file_may_import_modules_the_helper_did_not(sandbox) -> None:
    text = "import fractions, statistics, wave\n" + ELEMENTWISE.solution_text()
    assert [r.score for r in grade_task(ELEMENTWISE, text, LIMITS, sandbox)] == [5, 5]


def test_children_run_as_nobody_only_where_nobody_can_read_the_modules(open_dir) -> None:
    module = open_dir / "lib" / "mod.py"
    module.parent.mkdir()
    module.write_text("")
    for mode, readable in [(0o755, True), (0o750, False), (0o711, False)]:
        module.parent.chmod(mode)
        assert readable_by_anyone([str(module.parent), str(open_dir / "missing")]) is readable
    module.parent.chmod(0o755)
    open_dir.chmod(0o700)  # (a directory above it closed, as pyenv's /root)
    assert not readable_by_anyone([str(module)])
    open_dir.chmod(0o755)
    module.chmod(0o600)
    assert not readable_by_anyone([str(module)])


def test_limits_from_the_command_line() -> None:
    got = limits(["30", "transformer=120"], 512)
    assert (got.time, got.per_task, got.memory) == (30.0, {"transformer": 120.0}, 512 * 2**20)
    assert got.time_for("transformer") == 120 and got.time_for("adam") == 30
    assert limits(None, None) == Limits()
    for bad in (["0"], ["x"], ["nope=3"], ["adam=-1"]):
        with pytest.raises(SystemExit, match="--time-limit expects"):
            limits(bad, None)
    with pytest.raises(SystemExit, match="--memory-limit expects MiB > 0, got 0"):
        limits(None, 0)
