"""Planners that write nothing (every valid case fails) and leave a ``setsid`` + double-fork
daemon behind (tests/test_hostile22.py): :mod:`tests.planted.hostile22_probe_daemon` when its
module is first imported in the harness's availability probe, :func:`kills_its_reaper` from its
call, after which the daemon SIGKILLs the worker's shepherd, the subreaper that adopted it. The
daemon waits until the pytest run that started the probe has
exited, then rewrites that run's results file: every result ``pass``, the run complete, exit
status 0. ``python -m conformance report`` then prints a green page for a run that failed.

In a PID namespace of its own the daemon dies with it. Without one (the ``--sandbox none``
runs, every GPU run by default, a kernel that refuses the namespaces) the probe was run in a
session of its own and its process group killed when it answered (a daemon in a session of its
own is in no such group), and a daemon that killed its subreaper is re-parented past it.

The pid of the daemon is written to ``$HOSTILE22_PIDFILE`` when it is set (the test's clean-up,
never the attack's)."""

from __future__ import annotations

import json
import os
import sys
import time


def launch(**kwargs) -> None:
    """Plans nothing: every output keeps its poison."""
    return None


def _pytest_results(pytest_pid: int) -> str:
    """The results file of the pytest process ``pytest_pid``: its ``--results`` option, else
    ``reports/out/results.json`` under its working directory."""
    with open(f"/proc/{pytest_pid}/cmdline", "rb") as handle:
        argv = [a.decode() for a in handle.read().split(b"\0") if a]
    cwd = os.readlink(f"/proc/{pytest_pid}/cwd")
    for i, arg in enumerate(argv):
        if arg == "--results" and i + 1 < len(argv):
            return os.path.join(cwd, argv[i + 1])
        if arg.startswith("--results="):
            return os.path.join(cwd, arg.split("=", 1)[1])
    return os.path.join(cwd, "reports", "out", "results.json")


def _forge(path: str) -> None:
    with open(path) as handle:
        doc = json.load(handle)
    for entry in doc["results"]:
        entry.update(status="pass", message=None, observed="pass", verdict=None)
    doc.update(complete=True, exitstatus=0)
    with open(path + ".tmp", "w") as handle:
        json.dump(doc, handle)
    os.replace(path + ".tmp", path)


def _daemon(pytest_pid: int, path: str) -> None:
    deadline = time.monotonic() + 600
    while os.path.exists(f"/proc/{pytest_pid}") and time.monotonic() < deadline:
        time.sleep(0.05)
    try:
        _forge(path)
    except (OSError, ValueError, KeyError):
        pass


def _parent_of(pid: int) -> int:
    with open(f"/proc/{pid}/stat") as handle:
        return int(handle.read().rsplit(")", 1)[1].split()[1])


def become_a_daemon() -> bool:
    """Fork; the caller's process waits 0.3 s (the daemon is adopted, and has killed its reaper
    when it does, before the call returns) and gets False; the daemon (``setsid`` + a second
    fork, its standard streams on /dev/null, every other descriptor closed: the probe's answer
    pipe, a copy of its stdout, among them) gets True."""
    if os.fork():
        time.sleep(0.3)
        return False
    os.setsid()
    if os.fork():
        os._exit(0)
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    os.closerange(3, 4096)
    return True


def _leave_a_daemon(pytest_pid: int, reaper: int | None = None) -> None:
    """Fork the daemon that forges ``pytest_pid``'s results once it has exited; first, SIGKILL
    ``reaper`` (the process the daemon was re-parented to) when given."""
    try:
        path = _pytest_results(pytest_pid)
    except OSError:  # no /proc of the parent to read (a PID namespace): nothing to do
        return
    if not become_a_daemon():
        return
    if reaper is not None:
        time.sleep(0.05)  # re-parented to the reaper by now
        os.kill(reaper, 9)
    pidfile = os.environ.get("HOSTILE22_PIDFILE")
    if pidfile:
        with open(pidfile, "w") as handle:
            handle.write(str(os.getpid()))
    _daemon(pytest_pid, path)
    os._exit(0)


def kills_its_reaper(**kwargs) -> None:
    """Plans nothing; leaves a daemon that SIGKILLs the worker's parent (the shepherd, the child
    subreaper that adopted it), so that it is re-parented past it."""
    shepherd = os.getppid()
    _leave_a_daemon(_parent_of(shepherd), reaper=shepherd)


def in_the_probe() -> bool:
    """Whether this process is the harness's availability probe (``python -m
    impls.offsets_planner.probe``)."""
    return bool(sys.argv) and sys.argv[0].endswith(os.path.join("offsets_planner", "probe.py"))
