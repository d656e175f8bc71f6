"""The other side of sandbox.py: the helper interpreter, and the child processes it forks.

``zygote(ctl_fd)`` runs in a fresh interpreter (``python -I``, started by the grader).
It imports NumPy, minitensor and the course's tasks (never a student's file), then
answers the grader on the control socket, one request at a time:

``fork``     a child process for one task (below), given its socket and two files
``poll``     is that child still running?
``release``  kill the child, its process group and any process it left behind (on
             Linux the helper is their subreaper, so even a process that escaped into a
             new session comes back here to be killed), and say how the child ended

A child first cuts itself off: its own session, stdout and stderr into the file the
grader reads (capped), a memory limit (RLIMIT_AS) and a file-size limit, user
``nobody`` when the grader runs as root (``children_user``), killed when the helper dies, a Python
traceback dumped on SIGUSR1 (the grader asks "where are you?" before killing it at a
time limit) or on a crash.  Then ``serve`` loads the student's sources, says which
failed to load, and answers requests with the probes of probes.py: plain data back
(wire.py), or the exception the student's code raised and where.
"""

from __future__ import annotations

import ctypes
import faulthandler
import os
import signal
import socket
import stat
import sys
import time
import traceback
from pathlib import Path

import numpy as np

from . import probes, wire

_PR_SET_PDEATHSIG, _PR_SET_CHILD_SUBREAPER = 1, 36  # Linux prctl options
FILE_SIZE = 16 * 2**20  # bytes a child may write to its output file


def _prctl(option: int, value: int) -> None:
    """Linux's prctl; nothing elsewhere (the protection it gives is then missing, see docs/course.md)."""
    if sys.platform.startswith("linux"):
        ctypes.CDLL(None, use_errno=True).prctl(option, value, 0, 0, 0)


def _children() -> set:
    """The pids of this process's children (from Linux's /proc; none found where there is no /proc)."""
    me = os.getpid()
    try:
        return {int(p) for p in Path(f"/proc/{me}/task/{me}/children").read_text().split()}
    except OSError:  # (a kernel without that file: each process's parent, from its stat)
        pass
    found = set()
    for entry in Path("/proc").glob("[0-9]*"):
        try:
            if int(entry.joinpath("stat").read_text().rsplit(")", 1)[1].split()[1]) == me:
                found.add(int(entry.name))
        except (OSError, ValueError, IndexError):
            continue
    return found


def _kill(pid: int) -> None:
    """SIGKILL to ``pid``'s process group and to ``pid`` (either may be gone already)."""
    for kill in (os.killpg, os.kill):
        try:
            kill(pid, signal.SIGKILL)
        except OSError:
            pass


def _ended(pid: int) -> bool:
    """Has child ``pid`` ended?  (Not reaped: until it is, its pid and process group id stay its own.)"""
    try:
        return os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None
    except ChildProcessError:
        return True


def _reap(pid: int, block: bool) -> int | None:
    """``pid``'s exit code (negative: the signal that ended it), or None while it runs."""
    try:
        done, status = os.waitpid(pid, 0 if block else os.WNOHANG)
    except ChildProcessError:
        return None
    return os.waitstatus_to_exitcode(status) if done else None


def _sweep(known: set) -> None:
    """Kill and reap every child of this helper that is not a child the grader still uses."""
    for _ in range(100):  # (bounded: a fork bomb is held back by RLIMIT_NPROC)
        strays = _children() - known
        if not strays:
            return
        for pid in strays:
            _kill(pid)
        time.sleep(0.001)
        for pid in strays:
            _reap(pid, block=False)


def _release(known: set, pid: int) -> dict:
    """Kill child ``pid`` and what it left behind; how it ended (``running``: it was killed here)."""
    if pid not in known:  # (never signal a pid that is not a child of ours)
        return {"code": None, "running": False}
    running = not _ended(pid)
    _kill(pid)  # (its process group outlives it otherwise)
    code = _reap(pid, block=True)
    known.discard(pid)
    _sweep(known)
    return {"code": code, "running": running}


def zygote(ctl_fd: int, user: str | None = None) -> None:
    """The helper's loop (see the module docstring); returns never, exits when the grader hangs up.

    ``user``: who the children run as (default: ``children_user()``).
    """
    probes.preload()
    user = user or children_user()
    _check_user(user)
    _prctl(_PR_SET_CHILD_SUBREAPER, 1)
    _prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    ctl = socket.socket(fileno=ctl_fd)
    known: set = set()  # the children the grader uses
    try:
        wire.send(ctl, {"ready": os.getpid(), "user": user})
        while True:
            try:
                request = wire.receive(ctl)
            except EOFError:
                break
            if "fork" in request:
                fds = socket.recv_fds(ctl, 1, 3)[1]
                pid = os.fork()
                if pid == 0:
                    _child(ctl, fds, {**request["fork"], "user": user})
                for fd in fds:
                    os.close(fd)
                known.add(pid)
                wire.send(ctl, {"pid": pid})
            elif "poll" in request:
                wire.send(ctl, {"running": request["poll"] in known and not _ended(request["poll"])})
            elif "release" in request:
                wire.send(ctl, _release(known, request["release"]))
    finally:
        for pid in list(known):
            _release(known, pid)
        _sweep(known)
        os._exit(0)


def _limit(memory: int | None) -> None:
    """This process's limits: ``memory`` bytes of address space (None: none), FILE_SIZE per file, no core dump."""
    import resource

    limits = [(resource.RLIMIT_FSIZE, FILE_SIZE), (resource.RLIMIT_CORE, 0)]
    if memory is not None:
        limits.append((resource.RLIMIT_AS, memory))
    for kind, value in limits:
        try:
            resource.setrlimit(kind, (value, value))
        except (ValueError, OSError):  # (macOS refuses RLIMIT_AS)
            pass
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past FILE_SIZE fails, and does not kill


def readable_by_anyone(paths: list) -> bool:
    """Can a user with no rights of its own read ``paths`` (those that exist), through every directory above them?"""
    for path in map(Path, paths):
        if not path.exists():
            continue
        for place in [path, *path.parents]:
            need = stat.S_IXOTH if place != path else stat.S_IROTH | (stat.S_IXOTH if path.is_dir() else 0)
            if place.stat().st_mode & need != need:
                return False
    return True


def children_user() -> str:
    """Who the children run as: ``nobody`` under root, if ``nobody`` can read the modules a student may import
    (else a student's ``import statistics`` would fail); otherwise the grading user."""
    import pwd

    if os.getuid() == 0 and readable_by_anyone(sys.path):
        try:
            return pwd.getpwnam("nobody").pw_name
        except KeyError:
            pass
    return pwd.getpwuid(os.getuid()).pw_name


def _check_user(user: str) -> None:
    """``ValueError`` (the helper does not start) unless this process can run its children as ``user``."""
    import pwd

    try:
        uid = pwd.getpwnam(user).pw_uid
    except KeyError:
        raise ValueError(f"the children's user {user!r} does not exist") from None
    if os.getuid() not in (0, uid):
        raise ValueError(f"only root can run the children as {user!r}")


def _become(user: str) -> None:
    """Run as ``user`` (a no-op unless the helper runs as root and ``user`` is another)."""
    import pwd
    import resource

    entry = pwd.getpwnam(user)
    if entry.pw_uid == os.getuid():
        return
    os.setgroups([])
    os.setgid(entry.pw_gid)
    os.setuid(entry.pw_uid)
    resource.setrlimit(resource.RLIMIT_NPROC, (256, 256))  # (counted per user: nobody's processes)


def _child(ctl: socket.socket, fds: list, settings: dict) -> None:
    """The forked child: cut off (see the module docstring), then ``serve``; never returns."""
    try:
        helper = os.getppid()
        conn_fd, out_fd, dump_fd = fds
        ctl.close()
        os.setsid()
        os.chdir("/")
        os.dup2(os.open(os.devnull, os.O_RDONLY), 0)
        os.dup2(out_fd, 1)
        os.dup2(out_fd, 2)
        keep = sorted({0, 1, 2, conn_fd, dump_fd})
        for low, high in zip(keep, [*keep[1:], 2**16]):
            os.closerange(low + 1, high)
        _limit(settings["memory"])
        _become(settings["user"])
        _prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)  # (after setuid, which clears it)
        if os.getppid() != helper:  # the helper died meanwhile
            os._exit(1)
        faulthandler.enable(file=dump_fd, all_threads=True)
        faulthandler.register(signal.SIGUSR1, file=dump_fd, all_threads=True, chain=False)
        serve(socket.socket(fileno=conn_fd))
    finally:
        os._exit(0)


def describe(error: BaseException, files: set) -> dict:
    """An exception as plain data: its type, message and the innermost line of a student's file."""
    frames = [f for f in traceback.extract_tb(error.__traceback__) if f.filename in files]
    try:
        message = str(error)[:2000]
    except Exception:  # (a student's exception with a broken __str__)
        message = "?"
    reply = {"type": type(error).__name__, "message": message}
    if frames:
        reply["where"] = f"{Path(frames[-1].filename).name}:{frames[-1].lineno}"
    return reply


def _flush() -> None:
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:
            pass


def serve(conn: socket.socket) -> None:
    """Load the sources of the hello, reply which failed, then answer requests until the grader hangs up."""
    from .workbook import load_sources, mixed

    hello = wire.receive(conn)
    files = {path for path, _ in hello["sources"].values()}
    own = load_sources(hello["sources"])
    problems = {name: m for name, m in vars(own).items() if isinstance(m, str)}
    task = hello["task"]
    wb = None if task in problems else mixed(task, getattr(own, task), own)
    _flush()
    wire.send(conn, {"problems": problems})
    while True:
        try:
            request = wire.receive(conn)
        except EOFError:
            return
        try:
            with np.errstate(all="ignore"):
                reply = {"id": request["id"], "value": probes.run(wb, task, request["probe"], request["args"])}
            packed = wire.pack(reply)  # (a student's result may not be plain data)
        except BaseException as error:  # SystemExit and KeyboardInterrupt too: the student's to lose
            packed = wire.pack({"id": request["id"], "raised": describe(error, files)})
        _flush()
        conn.sendall(len(packed).to_bytes(8, "big") + packed)
