"""The background compiler: a second process that compiles kernels into numba's disk cache.

On a fresh machine every kernel compiles on its first call (0.1-6 s each; the demo's
kernels took 17 s, its training 2 s).  ``jit.py`` does not wait for that: the first call
runs the kernel's NumPy reference and asks this module to compile the kernel, for the
types of its arguments, in another process.  That process writes numba's disk cache; when
it answers, the kernel's next call loads the compiled code from there (milliseconds) and
runs it.  Later processes load it at their first call.

Why a process and not a thread: numba holds the GIL for most of a compilation, so a
thread would stall the program it should not delay.  The process runs at a lower
priority (``NICENESS``) and, on Linux, in the idle scheduling class (``SCHED_IDLE``: it gets
only the cycles no other process wants): the program keeps the cores, and its thread policy
(``threads.py``) does not count the compiler as a busy process.

Its life:

- started by the first request of a process (``request``), with the same Python, the
  same ``minitensor`` package and the same environment (so the same cache folder);
- reads one request a line on its stdin, compiles it, answers ``<id> ok`` (or ``<id>
  failed``) on its stdout; a thread of the parent reads the answers (``finished``);
- stops as soon as its stdin closes, which happens when the parent exits, however it
  exits (the parent's ``atexit`` also waits for it; if the parent is killed, the system
  closes the pipe).  It never outlives its parent and is never left a zombie: the
  parent's reader thread waits for it when it ends;
- a forked child of the parent does not share it (it starts its own if it needs one).

Several processes at once (``pytest -n 2``, two scripts) each have their own background
process; numba's cache index is written under a lock (``cache.guard_saves``), so they
never lose each other's entries.

A request names the kernel (module and function) and describes each argument by its numba
type's ingredients (``describe``): an array by dtype, ndims, layout (C, F or neither) and
whether it is read-only; a scalar (or a task factory's dtype name) by its type and value
(numba may specialise on a value).  The background process makes stand-in arguments of the same types (``rebuild``)
and compiles for them; it never runs the kernel.

>>> describe(np.zeros((3, 4), np.float32)[:, ::2])
['array', '<f4', 2, 'A', False]
>>> rebuild(describe(np.float32(2.5))), rebuild(['array', '<f8', 2, 'F', True]).flags.f_contiguous
(np.float32(2.5), True)
"""

from __future__ import annotations

import atexit
import json
import os
import signal
import subprocess
import sys
import threading

import numpy as np

from . import cache

NICENESS = 10  # the background process's priority below the program's (os.nice)
_PACKAGE_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
_SERVE = (
    "import sys; sys.path.insert(0, {root!r}); "
    "from minitensor.kernels.runtime import background, jit; background.serve(jit.compile_request)"
)
_lock = threading.Lock()
_state = {"server": None, "broken": False}


class Unsupported(Exception):
    """An argument this module cannot describe (the kernel then compiles in the calling process)."""


# ------------------------------------------------------------------ the parent's side
class _Server:
    """The background process of one parent process, and the answers it gave."""

    def __init__(self) -> None:
        self.owner = os.getpid()
        self.next_id = 0
        self.answers: dict[int, bool | None] = {}  # request id -> None (compiling), True (cached), False (failed)
        self.process = subprocess.Popen(
            [sys.executable, "-c", _SERVE.format(root=_PACKAGE_ROOT)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            bufsize=1,
        )
        self.descriptors = (self.process.stdin.fileno(), self.process.stdout.fileno())  # (for a forked child)
        self.reader = threading.Thread(target=self._read, name="minitensor-background-compiler", daemon=True)
        self.reader.start()

    def send(self, module: str, name: str, described: list) -> int:
        self.next_id += 1
        self.answers[self.next_id] = None
        line = json.dumps({"id": self.next_id, "module": module, "name": name, "args": described})
        self.process.stdin.write(line + "\n")
        self.process.stdin.flush()
        return self.next_id

    def _read(self) -> None:
        """(The reader thread.)  Record each answer; when the process ends, fail what it did not
        answer and wait for it (no zombie)."""
        for line in self.process.stdout:
            request_id, status = line.split()
            self.answers[int(request_id)] = status == "ok"
        self.process.wait()
        with _lock:
            for request_id, answer in self.answers.items():
                if answer is None:
                    self.answers[request_id] = False
            if _state["server"] is self:
                _state["server"] = None
                _state["broken"] = True  # (it ended while the parent runs: do not start another)

    def stop(self, timeout: float = 5.0) -> None:
        """Close its stdin (it exits at once) and wait for it; kill it if it does not end in time."""
        try:
            self.process.stdin.close()
        except OSError:
            pass
        try:
            self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


def request(module: str, name: str, args: tuple) -> tuple | None:
    """Ask the background process to compile the kernel ``name`` of ``module`` for arguments of
    the types of ``args``; the handle for ``finished``, or None when there is no background process
    here (it failed to start or ended, or an argument cannot be described): compile in this process."""
    try:
        described = [describe(a) for a in args]
    except Unsupported:
        return None
    with _lock:
        server = _state["server"]
        if server is None or server.owner != os.getpid():
            if _state["broken"]:
                return None
            try:
                server = _state["server"] = _Server()
            except OSError:
                _state["broken"] = True
                return None
        try:
            return server, server.send(module, name, described)
        except (OSError, ValueError):  # (the process ended: its pipe is closed)
            return None


def finished(handle: tuple) -> bool | None:
    """None while the request of ``handle`` compiles; True when its code is in the disk cache;
    False when it failed (the process could not compile it, or ended)."""
    server, request_id = handle
    if server.owner != os.getpid():  # (a forked child: its parent's process does not answer it)
        return False
    return server.answers.get(request_id, False)


def running() -> bool:
    """True when this process has a background compiler running."""
    server = _state["server"]
    return server is not None and server.owner == os.getpid() and server.process.poll() is None


def stop() -> None:
    """Stop this process's background compiler (pending requests fail); at exit, and for tests."""
    with _lock:
        server, _state["server"] = _state["server"], None
    if server is not None and server.owner == os.getpid():
        server.stop()


def _forget_after_fork() -> None:
    """In a forked child: the parent's background process is the parent's.  The child lets go of its
    copies of the pipe's ends, so that the process still sees its stdin close when the parent exits:
    ``/dev/null`` takes their descriptors' places (closing the file objects could wait forever for a
    lock the parent's reader thread held at the fork, and closing the bare descriptors would let a
    later file take their numbers, which the file objects would close when collected).  The locks
    of this module may have been held by another thread at the fork: the child gets new ones."""
    global _lock
    _lock = threading.Lock()
    server, _state["server"] = _state["server"], None
    if server is not None:
        _inherited.append(server)  # (never collected: its file objects keep /dev/null's descriptors)
        null = os.open(os.devnull, os.O_RDWR)
        for descriptor in server.descriptors:
            os.dup2(null, descriptor)
        os.close(null)


_inherited: list = []  # (in a forked child) the parent's servers, let go of by ``_forget_after_fork``
atexit.register(stop)
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_after_fork)


# ------------------------------------------------------------------ arguments as their types
def describe(a) -> object:
    """What numba's type of the argument ``a`` depends on, as JSON (see the module docstring)."""
    if isinstance(a, np.ndarray):
        flags = a.flags
        if not flags.aligned or type(a) is not np.ndarray or a.dtype.kind not in "biufc":
            raise Unsupported(f"{type(a).__name__} of {a.dtype}")
        layout = "C" if flags.c_contiguous else "F" if flags.f_contiguous else "A"
        return ["array", a.dtype.str, a.ndim, layout, not flags.writeable]
    if a is None:
        return None
    if type(a) in (bool, int, float, str):  # (a str: a task factory's dtype name)
        return ["py", type(a).__name__, a]
    if isinstance(a, np.generic) and a.dtype.kind in "biuf":
        return ["np", a.dtype.str, a.item()]
    if type(a) is tuple:
        return ["tuple", [describe(x) for x in a]]
    raise Unsupported(type(a))


def rebuild(described: object) -> object:
    """A stand-in argument whose numba type is that of the described one (``describe``)."""
    if described is None:
        return None
    kind = described[0]
    if kind == "array":
        _, dtype, ndim, layout, readonly = described
        if layout == "C":
            a = np.zeros((1,) * ndim, dtype)  # (a size-1 array is C- and F-contiguous: numba says C)
        elif layout == "F":
            a = np.zeros((2,) * ndim, dtype, order="F")
        else:
            a = np.zeros((2,) * (ndim - 1) + (4,), dtype)[..., ::2]
        a.setflags(write=not readonly)
        return a
    if kind == "py":
        return {"bool": bool, "int": int, "float": float, "str": str}[described[1]](described[2])
    if kind == "np":
        return np.dtype(described[1]).type(described[2])
    return tuple(rebuild(x) for x in described[1])


# ------------------------------------------------------------------ the background process's side
def serve(compile_request) -> None:
    """The background process's loop: ``compile_request(module, name, args)`` for each request
    read from stdin (True when compiled and cached), an answer a line on stdout.  Stops when stdin
    closes, even in the middle of a compilation (but not of a cache write: ``cache.SAVING``)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C in the terminal is for the parent
    try:
        os.nice(NICENESS)
        os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))  # (Linux only: elsewhere the niceness)
    except (AttributeError, OSError):
        pass
    requests: list = []
    ready = threading.Condition()

    def read() -> None:
        for line in sys.stdin:
            with ready:
                requests.append(json.loads(line))
                ready.notify()
        with cache.SAVING:  # the parent closed the pipe or exited: stop now
            os._exit(0)

    threading.Thread(target=read, daemon=True).start()
    while True:
        with ready:
            while not requests:
                ready.wait()
            job = requests.pop(0)
        try:
            ok = bool(compile_request(job["module"], job["name"], [rebuild(a) for a in job["args"]]))
        except Exception:  # noqa: BLE001  (the parent compiles it itself, and sees the error there)
            ok = False
        sys.stdout.write(f"{job['id']} {'ok' if ok else 'failed'}\n")
        sys.stdout.flush()
