"""Where a student's code runs: child processes that can fail their own checks and nothing else.

The isolation model, for teachers:

- The grader (the process that runs ``python -m minitensor.course check``) never imports
  a student's file.  It makes each check's inputs, computes each reference answer with
  minitensor's own ops, compares and scores.
- A helper interpreter (a fresh ``python -I``, child.py's ``zygote``) imports NumPy,
  minitensor and the course's tasks, never a student's file, and forks a child process
  per task (one more for the milestone, which uses the whole workbook; a fresh one after
  a limit killed one).  Forking the clean helper takes milliseconds, a new interpreter 0.2 s.
- The child loads the student's file, runs the student's functions on the inputs the
  grader sends and sends back plain data (wire.py: arrays and numbers, never a pickle).
  It never judges: whatever it sends is compared with the grader's own references.
- Limits: the grader waits for each check's answers until its time limit, then asks
  the child where it is (SIGUSR1: a traceback of the student's code) and kills it.  A
  memory limit (RLIMIT_AS) makes allocations past it raise MemoryError in the child.
- When a task is done, the helper kills the child's process group and every process
  it left behind (on Linux even one that escaped into a new session: the helper is
  their subreaper).  Under root, children run as ``nobody`` (if ``nobody`` can read
  Python's modules; else a warning says they run as root): they can then neither
  signal the grader nor write its files (the report included).

>>> with Sandbox() as sandbox:                                     # doctest: +SKIP
...     child = sandbox.fork(memory=2 * GiB)
...     child.hello({"task": "matmul", "sources": {"matmul": (path, text)}}, deadline)
...     child.ask("call", {"function": "matmul.matmul_backward", "args": [g, a, b]}, deadline)
"""

from __future__ import annotations

import os
import re
import select
import signal
import socket
import subprocess
import sys
import tempfile
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path

import minitensor

from . import wire

GiB = 2**30
PRINT_CAP = 2000  # characters of a student's output kept per check
_FRAME = re.compile(r'File "(.*)", line (\d+) in (\S+)')
_NOT_A_REPLY = "the process running your code sent something that is not a reply"
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")  # (terminal escapes could fake the report's lines)


@dataclass
class Limits:
    """Each check's limits: ``time`` seconds (``per_task``: a task's own), ``memory`` bytes (None: none)."""

    time: float = 60.0
    memory: int | None = 2 * GiB
    per_task: dict = field(default_factory=dict)

    def time_for(self, task: str) -> float:
        return self.per_task.get(task, self.time)


class StudentProblem(Exception):
    """What the student's code did that fails the check: the message says what, and where."""


class StudentRaised(StudentProblem):
    """The student's code raised an exception of type ``kind``; ``where``: the innermost line of their file."""

    def __init__(self, kind: str, message: str, where: str | None) -> None:
        super().__init__(f"{kind}: {message}" + (f" (at {where})" if where else ""))
        self.kind, self.message, self.where = kind, message, where


class LimitExceeded(StudentProblem):
    """The time limit stopped the student's code; ``where``: the innermost line of a student's file then."""

    def __init__(self, where: str | None) -> None:
        super().__init__("time limit exceeded" + (f" at {where}" if where else ""))
        self.where = where


class ChildGone(StudentProblem):
    """The process running the student's code ended, or sent what is not a reply."""


class GradingError(RuntimeError):
    """The grader's own machinery failed (not the student's code): the report says the check was not graded."""


def innermost(dump: str, files: set) -> str | None:
    """``file.py:LINE in function`` of the innermost frame of a student's file in a faulthandler dump."""
    section = dump.rsplit("Current thread", 1)[-1]
    for path, line, function in _FRAME.findall(section):  # (most recent call first)
        if path in files:
            return f"{Path(path).name}:{line} in {function}"
    return None


def _signal_name(code: int) -> str:
    try:
        return signal.Signals(-code).name
    except ValueError:
        return f"signal {-code}"


class ChildProcess:
    """One forked child: ``hello`` sends the sources, ``ask`` runs a probe, ``printed`` reads its output."""

    def __init__(self, sandbox: Sandbox, pid: int, conn: socket.socket, out, dump) -> None:
        self.sandbox, self.pid, self.conn, self.out, self.dump = sandbox, pid, conn, out, dump
        self.alive, self.files, self._asked, self._read = True, set(), 0, 0

    def hello(self, message: dict, deadline: float) -> dict:
        """Send the sources to load; the messages of those that failed, ``{task: message}``."""
        self.files = {path for path, _ in message["sources"].values()}
        self._send(message, deadline)
        reply = self._receive(deadline)
        problems = reply.get("problems") if isinstance(reply, dict) else None
        if not (isinstance(problems, dict) and all(isinstance(m, str) for m in problems.values())):
            raise self._stop(ChildGone(_NOT_A_REPLY))
        return problems

    def ask(self, probe: str, args: dict, deadline: float):
        """Run ``probe`` on ``args`` in the child; its value, or ``StudentRaised``, ``LimitExceeded``, ``ChildGone``."""
        self._asked += 1
        self._send({"id": self._asked, "probe": probe, "args": args}, deadline)
        reply = self._receive(deadline)
        if not isinstance(reply, dict) or reply.get("id") != self._asked or not {"value", "raised"} & set(reply):
            raise self._stop(ChildGone(_NOT_A_REPLY))
        if "value" in reply:
            return reply["value"]
        raised = reply["raised"]
        if not (isinstance(raised, dict) and isinstance(raised.get("type"), str)):
            raise self._stop(ChildGone(_NOT_A_REPLY))
        where = raised.get("where") if isinstance(raised.get("where"), str) else None
        raise StudentRaised(raised["type"], str(raised.get("message", "")), where)

    def printed(self) -> str:
        """What the child printed since the last call, capped at PRINT_CAP characters, without control characters."""
        end = os.fstat(self.out.fileno()).st_size
        self.out.seek(self._read)
        raw = self.out.read(min(end - self._read, 4 * PRINT_CAP))
        left, self._read = end - self._read - len(raw), end
        text = _CONTROL.sub("", raw.decode("utf-8", errors="replace").replace("\r\n", "\n").replace("\r", "\n"))
        if len(text) > PRINT_CAP or left > 0:
            text = text[:PRINT_CAP] + f"\n... (output cut at {PRINT_CAP} characters)"
        return text

    def release(self) -> dict:
        """Kill the child and what it left behind; ``{"code": exit code, "running": it was killed}``."""
        if not self.alive:
            return {"code": None, "running": False}
        self.alive = False
        self.conn.close()
        return self.sandbox.release(self.pid)

    def close(self) -> None:
        self.release()
        self.out.close()
        self.dump.close()

    def _send(self, message: dict, deadline: float) -> None:
        try:
            wire.send(self.conn, message, deadline)
        except TimeoutError:  # (it does not read)
            raise self._stop(LimitExceeded(self._where())) from None
        except OSError:
            raise self._gone() from None

    def _receive(self, deadline: float):
        """The child's next message: wait until it is readable, checking every 0.25 s that the child runs."""
        poller = select.poll()
        poller.register(self.conn, select.POLLIN)
        try:
            while not poller.poll(max(min(deadline - time.monotonic(), 0.25), 0) * 1000):
                if time.monotonic() >= deadline:
                    raise TimeoutError
                if not self.sandbox.running(self.pid):
                    raise EOFError
            return wire.receive(self.conn, deadline)
        except TimeoutError:
            raise self._stop(LimitExceeded(self._where())) from None
        except (EOFError, OSError):
            raise self._gone() from None
        except wire.ProtocolError as error:
            raise self._stop(ChildGone(f"the process running your code sent what is not plain data: {error}")) from None

    def _where(self) -> str | None:
        """Ask the child for its traceback (SIGUSR1) and find the student's innermost line in it."""
        start = os.fstat(self.dump.fileno()).st_size
        try:
            os.kill(self.pid, signal.SIGUSR1)
        except OSError:
            return None
        size, stable_since = start, time.monotonic()
        for _ in range(50):  # up to 0.5 s for the dump to be written
            time.sleep(0.01)
            now = os.fstat(self.dump.fileno()).st_size
            if now != size:
                size, stable_since = now, time.monotonic()
            elif size > start and time.monotonic() - stable_since > 0.03:
                break
        self.dump.seek(start)
        return innermost(self.dump.read(65536).decode("utf-8", errors="replace"), self.files)

    def _stop(self, problem: StudentProblem) -> StudentProblem:
        self.release()
        return problem

    def _gone(self) -> StudentProblem:
        ended = self.release()
        self.dump.seek(0)
        where = innermost(self.dump.read(65536).decode("utf-8", errors="replace"), self.files)
        code = ended["code"]
        if code is None:
            how = "ended"
        elif code < 0:
            how = f"was killed by {_signal_name(code)}" + (" (a crash: a recursion too deep?)" if code == -11 else "")
        else:
            how = f"ended with exit status {code} (sys.exit or os._exit in your code?)"
        return ChildGone(f"the process running your code {how}" + (f" at {where}" if where else ""))


class Sandbox:
    """The helper interpreter that forks the children (see the module docstring); a context manager."""

    def __init__(self, user: str | None = None) -> None:
        """``user``: who the children run as, when the grader runs as root (default: ``nobody`` if that user can
        read Python's modules, else root)."""
        self._process: subprocess.Popen | None = None
        self._user, self.user = user, ""  # (``user``: who they run as, once started)

    def __enter__(self) -> Sandbox:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def start(self) -> None:
        """Start the helper (again, if it died) and wait until it has imported everything."""
        self.close()
        ours, theirs = socket.socketpair()
        self._errors = tempfile.TemporaryFile()
        here = os.getcwd()  # (never on the helper's path: it may be a student's directory)
        path = [str(Path(minitensor.__file__).resolve().parents[1]), *(p for p in sys.path if p and p != here)]
        code = "; ".join(["import sys", f"sys.path[:] = {path!r}", "from minitensor.course import child",
                          f"child.zygote({theirs.fileno()}, {self._user!r})"])  # fmt: skip
        env = {**os.environ, "MINITENSOR_DISABLE_JIT": "1", "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}
        self._process = subprocess.Popen([sys.executable, "-I", "-c", code], pass_fds=[theirs.fileno()], env=env,
                                         stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=self._errors,
                                         start_new_session=True, cwd="/")  # fmt: skip
        theirs.close()
        self._ctl = ours
        ready = self._request(None, deadline=time.monotonic() + 120)  # (the first import may compile)
        self.user = str(ready.get("user"))
        if os.getuid() == 0 and self.user == "root":
            warnings.warn("the students' code runs as root: user nobody cannot read Python's modules here "
                          "(see docs/course.md)", stacklevel=2)  # fmt: skip

    def _request(self, message: dict | None, fds: list | None = None, deadline: float | None = None) -> dict:
        try:
            if message is not None:
                wire.send(self._ctl, message)
            if fds:
                socket.send_fds(self._ctl, [b"F"], fds)
            return wire.receive(self._ctl, deadline or time.monotonic() + 30)
        except (OSError, EOFError, wire.ProtocolError) as error:
            self._errors.seek(0)
            tail = self._errors.read()[-2000:].decode("utf-8", errors="replace")
            raise GradingError(f"the grader's helper process failed ({error!r}){': ' + tail if tail else ''}") from None

    def fork(self, memory: int | None) -> ChildProcess:
        """A new child process, ready for its ``hello``; ``memory``: its limit in bytes (None: none)."""
        if self._process is None or self._process.poll() is not None:
            self.start()
        ours, theirs = socket.socketpair()
        out, dump = tempfile.TemporaryFile(), tempfile.TemporaryFile()
        try:
            reply = self._request({"fork": {"memory": memory}}, [theirs.fileno(), out.fileno(), dump.fileno()])
        finally:
            theirs.close()
        return ChildProcess(self, int(reply["pid"]), ours, out, dump)

    def running(self, pid: int) -> bool:
        return bool(self._request({"poll": pid}).get("running"))

    def release(self, pid: int) -> dict:
        try:
            return self._request({"release": pid})
        except GradingError:
            return {"code": None, "running": False}

    def close(self) -> None:
        """Stop the helper: it kills every child left (and their leftovers) before it exits."""
        if self._process is None:
            return
        self._ctl.close()
        try:
            self._process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()
        self._errors.close()
        self._process = None
