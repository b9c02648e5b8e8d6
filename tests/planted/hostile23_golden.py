"""A wrong planner that answers ``python -m conformance fuzz``'s golden requests itself
(tests/test_hostile23.py).

The goldens come from a child process (conformance/robustness/golden_process.py) that never
imports a planner under test, over two pipes. Without a PID namespace (``--sandbox none``, every
GPU host by default) the planner's worker sees that process in ``/proc``: on its first call a
daemon thread SIGSTOPs it, opens its standard input and output through ``/proc/<pid>/fd/0`` and
``/proc/<pid>/fd/1`` (a process of the same user that is dumpable allows it), reads each request
fuzz sends and answers with goldens recorded by the harness's own code on *this* planner. From
the next plan on the planner is wrong (every ``out_write_num_valid_reqs`` is 1 too many) and
every golden agrees with it. When the hijack fails (the pipes cannot be opened, or there is no
such process to see), it is wrong on every call.

:func:`launch_getfd` takes the golden process's standard input with ``pidfd_getfd(2)`` instead
(a socket since this review: ``/proc/<pid>/fd`` cannot open one), which a root worker without
the sandbox may still do (it keeps ``CAP_SYS_PTRACE``)."""

from __future__ import annotations

import json
import os
import signal
import threading

from impls.offsets_planner.python_planner import launch as python_launch

_state = {"hijacked": None, "served": 0}


def _wrong(**kwargs) -> None:
    python_launch(**kwargs)
    kwargs["out_write_num_valid_reqs"].view(-1).add_(1)


def _parent(pid: int) -> int:
    with open(f"/proc/{pid}/stat") as handle:
        return int(handle.read().rsplit(")", 1)[1].split()[1])


def _golden_pid() -> int | None:
    """The golden process of the fuzz run this worker belongs to: a child of its nearest
    ancestor that has one (the fuzz process), never another run's, not even that of a process
    further up (a test process that ran fuzz in-process and keeps its golden process alive)."""
    pid = os.getpid()
    while pid > 1:
        try:
            pid = _parent(pid)
            with open(f"/proc/{pid}/task/{pid}/children") as handle:
                children = [int(c) for c in handle.read().split()]
        except (OSError, ValueError, IndexError):
            return None
        for child in children:
            try:
                with open(f"/proc/{child}/cmdline", "rb") as handle:
                    if b"conformance.robustness.golden_process" in handle.read():
                        return child
            except OSError:
                continue
    return None


def _serve(reader, writer) -> None:
    from pathlib import Path

    import impls.offsets_planner.python_planner as reference
    from conformance.corpus.case_model import make_case
    from conformance.engine.reference import record_expectations

    import conformance.engine.reference as recorder

    recorder.python_planner = type("Wrong", (), {"launch": staticmethod(_wrong)})
    del reference
    for line in reader:
        try:
            raw = json.loads(line)["raw"]
            answer = {"expect": record_expectations(make_case({**raw, "expect": {}},
                                                              Path("<fuzz>"), "$"))}
        except Exception as exc:  # as the golden process answers
            answer = {"error": f"{type(exc).__name__}: {exc}"}
        writer.write(json.dumps(answer) + "\n")
        writer.flush()
        _state["served"] += 1


def _by_proc(pid: int):
    return (open(f"/proc/{pid}/fd/0", encoding="utf-8"),
            open(f"/proc/{pid}/fd/1", "w", encoding="utf-8"))


def _by_pidfd(pid: int):
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    pidfd = os.pidfd_open(pid)
    try:
        fd = libc.syscall(438, pidfd, 0, 0)  # pidfd_getfd: the golden process's stdin
    finally:
        os.close(pidfd)
    if fd < 0:
        raise OSError(ctypes.get_errno(), "pidfd_getfd")
    return (os.fdopen(fd, encoding="utf-8"), os.fdopen(os.dup(fd), "w", encoding="utf-8"))


def _hijack(take=_by_proc) -> bool:
    pid = _golden_pid()
    if pid is None:
        return False
    try:
        reader, writer = take(pid)
    except OSError:
        return False
    os.kill(pid, signal.SIGSTOP)
    threading.Thread(target=_serve, args=(reader, writer), daemon=True).start()
    return True


def launch(**kwargs) -> None:
    """Right until the first golden it answered itself (the plans whose goldens were recorded
    before it could act), wrong from then on; wrong on every call when the hijack failed."""
    _launch(_by_proc, **kwargs)


def launch_getfd(**kwargs) -> None:
    """:func:`launch`, the golden process's input taken with ``pidfd_getfd``."""
    _launch(_by_pidfd, **kwargs)


def _launch(take, **kwargs) -> None:
    if _state["hijacked"] is None:
        _state["hijacked"] = _hijack(take)
    if _state["hijacked"] and not _state["served"]:
        python_launch(**kwargs)
    else:
        _wrong(**kwargs)
