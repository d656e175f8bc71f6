"""No waiting for the compiler (runtime/jit.py, runtime/background.py): a kernel's first call runs
its NumPy reference while a background process compiles it into numba's disk cache; a later call
runs the compiled code.  Each test runs Python in a fresh process with an empty cache folder of its
own (``NUMBA_CACHE_DIR``), with the default behaviour (``MINITENSOR_JIT_WAIT`` unset), on
``kernels/flip.py``'s small kernel (one specialisation compiles in ~1 s)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numba
import numpy as np
import pytest

from minitensor.kernels.runtime import background

ROOT = Path(__file__).resolve().parents[2]
TIMEOUT = 300  # seconds for one compilation on a busy machine, with room to spare

# The flip kernel with its reference counted: ``run(dtype)`` flips a 3 x 4 array, checks the result,
# and says whether the reference computed it; ``until_compiled(dtype)`` calls it until it does not.
PRELUDE = f"""
TIMEOUT = {TIMEOUT}
import json, os, sys, time
import numpy as np
from minitensor.kernels import flip
from minitensor.kernels.runtime import background
kernel = flip._REVERSE_ROWS.serial
calls = []
reference = kernel.fallback
def counted(*args):
    calls.append(args)
    return reference(*args)
kernel.fallback = counted
def run(dtype):
    before = len(calls)
    x = np.arange(12, dtype=dtype).reshape(3, 4)
    assert (flip.flip(x, (1,)) == x[:, ::-1]).all()
    return len(calls) > before
def until_compiled(dtype):
    end = time.monotonic() + TIMEOUT
    while run(dtype):
        assert time.monotonic() < end, "not compiled in time"
        time.sleep(0.05)
def server_pid():
    server = background._state["server"]
    return None if server is None else server.process.pid
"""


def _env(cache: Path, **extra: str) -> dict:
    env = {key: value for key, value in os.environ.items() if not key.startswith("MINITENSOR_")}
    env.update(PYTHONPATH=str(ROOT), NUMBA_CACHE_DIR=str(cache), **extra)
    return env


def _start(code: str, cache: Path, **env: str) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-c", PRELUDE + code], env=_env(cache, **env), cwd=ROOT, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True,
    )  # fmt: skip


def _result(process: subprocess.Popen) -> dict:
    """The JSON object ``process`` printed last (it must exit 0)."""
    out, err = process.communicate(timeout=2 * TIMEOUT)
    assert process.returncode == 0, err
    return json.loads(out.strip().splitlines()[-1])


def _run(code: str, cache: Path, **env: str) -> dict:
    return _result(_start(code, cache, **env))


def _alive(pid: int) -> bool:
    """True while ``pid`` runs (a zombie, ended but not waited for, is not running)."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def _gone_within(pid: int, seconds: float) -> bool:
    end = time.monotonic() + seconds
    while _alive(pid):
        if time.monotonic() > end:
            return False
        time.sleep(0.05)
    return True


def test_first_call_runs_the_reference_then_compiled_code_and_a_new_process_loads_it(tmp_path) -> None:
    first = _run(
        "first = run('float64'); pid = server_pid(); until_compiled('float64')\n"
        "print(json.dumps({'first': first, 'server': pid is not None,"
        " 'compiled': len(kernel.compiled().signatures)}))",
        tmp_path,
    )
    assert first == {"first": True, "server": True, "compiled": 1}
    # the compiled code is in the disk cache: the next process runs it on its first call, with no
    # background process
    later = _run("print(json.dumps({'first': run('float64'), 'server': server_pid()}))", tmp_path)
    assert later == {"first": False, "server": None}


def test_a_fresh_machine_runs_the_references_without_importing_numba_until_a_kernel_arrives(tmp_path) -> None:
    """Nothing of the kernel in the disk cache: its first calls run the reference without importing
    numba (nor does asking whether kernels can call BLAS); the kernel's index file appears when the
    background process has compiled it, and the kernel's next call imports numba and runs it."""
    code = (
        "from minitensor.kernels.runtime import blas, cache\n"
        "indexed = cache.has_index(kernel.py_func)\n"
        "first, second, blas_found = run('float64'), run('float64'), blas.available()\n"
        "numba_before = 'numba' in sys.modules\n"
        "until_compiled('float64')\n"
        "print(json.dumps({'reference': [first, second], 'blas': blas_found, 'numba': [numba_before,"
        " 'numba' in sys.modules], 'index': [indexed, cache.has_index(kernel.py_func)]}))"
    )
    result = _run(code, tmp_path)
    assert result == {"reference": [True, True], "blas": True, "numba": [False, True], "index": [False, True]}


def test_a_fresh_machine_gets_a_blas_thread_task_without_importing_numba_for_it(tmp_path) -> None:
    """A task factory (``jit.CFuncFactory``) answers None while its cfunc compiles in the background,
    without importing numba; then the compiled task."""
    code = (
        "from minitensor.kernels import conv_depthwise\n"
        "first = conv_depthwise._forward_task('float64', False)\n"
        "numba_before = 'numba' in sys.modules\n"
        "end = time.monotonic() + TIMEOUT\n"
        "while conv_depthwise._forward_task('float64', False) is None:\n"
        "    assert time.monotonic() < end, 'not compiled in time'\n"
        "    time.sleep(0.05)\n"
        "task = conv_depthwise._forward_task('float64', False)\n"
        "print(json.dumps({'first': first, 'numba': [numba_before, 'numba' in sys.modules],"
        " 'address': bool(task.address)}))"
    )
    assert _run(code, tmp_path) == {"first": None, "numba": [False, True], "address": True}


def test_waiting_compiles_on_the_first_call(tmp_path) -> None:
    code = "print(json.dumps({'first': run('float32'), 'server': server_pid()}))"
    assert _run(code, tmp_path, MINITENSOR_JIT_WAIT="1") == {"first": False, "server": None}
    code = "import minitensor as mt; mt.set_jit_wait(True); print(json.dumps({'first': run('float64')}))"
    assert _run(code, tmp_path) == {"first": False}


def test_disabled_jit_runs_the_reference_without_numba_or_a_background_process(tmp_path) -> None:
    code = (
        "first, second = run('float64'), run('float64')\n"
        "print(json.dumps({'reference': [first, second], 'numba': 'numba' in sys.modules, 'server': server_pid()}))"
    )
    result = _run(code, tmp_path, MINITENSOR_DISABLE_JIT="1")
    # (the JIT off, ``Kernel.on`` picks the reference itself, so the kernel's fallback never runs)
    assert result == {"reference": [False, False], "numba": False, "server": None}
    assert not any(tmp_path.iterdir())  # nothing compiled


def test_background_process_ends_when_its_parent_exits_or_is_killed(tmp_path) -> None:
    # a normal exit: the parent waits for it (no zombie left)
    result = _run("run('float64'); print(json.dumps({'pid': server_pid()}))", tmp_path)
    assert not _alive(result["pid"])
    # killed (no atexit): the closed pipe ends it, in the middle of a compilation
    process = _start("run('float32'); print(server_pid(), flush=True); time.sleep(600)", tmp_path)
    pid = int(process.stdout.readline())
    assert _alive(pid)
    process.send_signal(signal.SIGKILL)
    process.communicate(timeout=60)
    assert _gone_within(pid, 30)


@pytest.mark.skipif(not hasattr(os, "SCHED_IDLE"), reason="no idle scheduling class here")
def test_background_process_runs_niced_in_the_idle_scheduling_class(tmp_path) -> None:
    """It takes only the cycles the program leaves (and the program's thread policy, which does not
    count niced processes, keeps its threads)."""
    process = _start("run('float32'); print(server_pid(), flush=True); time.sleep(600)", tmp_path)
    try:
        pid = int(process.stdout.readline())
        end = time.monotonic() + 30
        while os.sched_getscheduler(pid) != os.SCHED_IDLE and time.monotonic() < end:
            time.sleep(0.05)  # (it sets its class as it starts)
        assert os.sched_getscheduler(pid) == os.SCHED_IDLE
        assert os.getpriority(os.PRIO_PROCESS, pid) == os.getpriority(os.PRIO_PROCESS, 0) + background.NICENESS
    finally:
        process.kill()
        process.communicate(timeout=60)


def test_a_forked_child_starts_its_own_background_process(tmp_path) -> None:
    code = """
run('float64')
parent_server, handle = server_pid(), kernel._first_request  # (made before numba was loaded)
read, write = os.pipe()
child = os.fork()
if child == 0:  # the child: its parent's background process is not its own
    os.close(read)
    answer = {'old_handle': background.finished(handle), 'reference': run('float32'), 'server': server_pid()}
    until_compiled('float32')
    os.write(write, json.dumps(answer).encode())
    sys.exit(0)  # (atexit stops the child's background process)
os.close(write)
child_answer = json.loads(os.read(read, 10000))
os.waitpid(child, 0)
until_compiled('float64')  # the parent's request is still answered
print(json.dumps({**child_answer, 'parent_server': parent_server, 'parent_still': server_pid()}))
"""
    result = _run(code, tmp_path)
    assert result["old_handle"] is False and result["reference"] is True
    assert result["server"] not in (None, result["parent_server"])
    assert result["parent_still"] == result["parent_server"]
    assert not _alive(result["server"])


def test_two_processes_compile_into_one_cache_without_losing_entries(tmp_path) -> None:
    """Both compile both specialisations at once, each in its own background process, and write the
    kernel's one cache index; a third process then loads both (none lost or pointing astray)."""
    code = "for dtype in ('float32', 'float64'): run(dtype)\n"
    code += "for dtype in ('float32', 'float64'): until_compiled(dtype)\nprint('{}')"
    both = [_start(code, tmp_path) for _ in range(2)]
    assert [_result(p) for p in both] == [{}, {}]
    code = "print(json.dumps({'reference': [run('float32'), run('float64')], 'server': server_pid()}))"
    assert _run(code, tmp_path) == {"reference": [False, False], "server": None}


@pytest.mark.parametrize(
    "argument",
    [
        np.zeros((3, 4), np.float32),
        np.zeros((3, 4), np.float64, order="F"),
        np.zeros((3, 4, 5), np.float32)[:, ::2],
        np.zeros(5, np.int64)[::-1],
        np.float32(2.5),
        1.5,
        3,
        True,
        "float32",
        None,
        (np.zeros(2), 2.0),
    ],
)
def test_a_described_argument_rebuilds_to_the_same_numba_type(argument) -> None:
    versions = [argument]
    if isinstance(argument, np.ndarray):
        read_only = argument.view()
        read_only.setflags(write=False)
        versions.append(read_only)
    for a in versions:
        described = json.loads(json.dumps(background.describe(a)))  # (as sent through the pipe)
        assert numba.typeof(background.rebuild(described)) == numba.typeof(a)


@pytest.mark.parametrize(
    "argument", [np.zeros(3, [("a", np.float32)]), np.zeros(3).view(np.recarray), np.zeros(3, object), b"bytes"]
)
def test_an_argument_numba_types_by_more_than_its_dtype_is_not_described(argument) -> None:
    with pytest.raises(background.Unsupported):
        background.describe(argument)
