"""A planner that writes nothing and, imported in the availability probe of ``python -m
conformance fuzz``, leaves a ``setsid`` + double-fork daemon that waits for the fuzz process to
exit and then empties the fuzz run's ``--out`` folder (the found cases, the evidence of its
divergences) and writes ``$FUZZ_DAEMON_MARK`` (tests/test_hostile22.py). Without a PID namespace
(every GPU host) nothing else ends it."""

from __future__ import annotations

import os
import time

from tests.planted.hostile22_daemons import become_a_daemon, in_the_probe, launch

__all__ = ["launch"]  # the planner


def _out_of(pid: int) -> str:
    with open(f"/proc/{pid}/cmdline", "rb") as handle:
        argv = [a.decode() for a in handle.read().split(b"\0") if a]
    return os.path.join(os.readlink(f"/proc/{pid}/cwd"), argv[argv.index("--out") + 1])


def _leave_a_daemon(fuzz_pid: int) -> None:
    out = _out_of(fuzz_pid)
    if not become_a_daemon():
        return
    deadline = time.monotonic() + 600
    while os.path.exists(f"/proc/{fuzz_pid}") and time.monotonic() < deadline:
        time.sleep(0.02)
    for name in os.listdir(out):
        os.remove(os.path.join(out, name))
    with open(os.environ["FUZZ_DAEMON_MARK"], "w") as handle:
        handle.write(str(os.getpid()))
    os._exit(0)


if in_the_probe() and "FUZZ_DAEMON_MARK" in os.environ:
    _leave_a_daemon(os.getppid())
