"""Planners that attack the judge's *process* from the isolation worker (``tests/test_sandbox.py``
gives each its verdict). Each writes ``out_verify_num_valid`` one too high, so its case must fail
whatever the attack achieves; what the attack found or did is appended to
``$CONFORMANCE_SANDBOX_MARKS/<planner>`` (one line per event) for the test to read.

* :func:`stops_judge`: walks its ancestors (``PPid`` in ``/proc``) to the first that runs pytest and
  sends it SIGSTOP: without a PID namespace the whole run hangs.
* :func:`pokes_judge_memory`: opens ``/proc/<pytest>/mem`` and ``/proc/<shepherd>/mem`` read-write
  and writes back 8 bytes it read from a writable mapping: a same-uid process could change the
  judge's verdict there.
* :func:`leaves_daemon`: leaves a ``setsid`` + double-fork daemon that writes an all-pass results
  file (``$CONFORMANCE_PLANTED_RESULTS``) at once, and again once the run has written its final
  one, with a heartbeat line every 0.1 s.

All of them first try to unmount a private ``/proc`` (``umount2(MNT_DETACH)``) to see the
processes outside their namespace (only inside the sandbox: never the machine's own).
"""

from __future__ import annotations

import ctypes
import json
import os
import re
import signal
import time

from impls.offsets_planner.python_planner import launch as python_launch


def _mark(planner: str, text: str) -> None:
    folder = os.environ.get("CONFORMANCE_SANDBOX_MARKS")
    if folder:
        with open(os.path.join(folder, planner), "a") as handle:
            handle.write(text + "\n")


def _wrong(kwargs: dict) -> None:
    python_launch(**kwargs)
    kwargs["out_verify_num_valid"].add_(1)


def _unmount_proc(planner: str) -> None:
    """Only where PID 1 is the sandbox's own (never the machine's ``/proc``)."""
    try:
        with open("/proc/1/cmdline", "rb") as handle:
            first = handle.read()
            ours = b"isolation_worker" in first or b"probe_sandbox" in first
    except OSError:
        ours = False
    if not ours:
        _mark(planner, "umount /proc: skipped (not in a sandbox)")
        return
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.umount2(b"/proc", 2) == 0:
        _mark(planner, "umount /proc: done")
    else:
        _mark(planner, f"umount /proc: {os.strerror(ctypes.get_errno())}")


def _judge_pid() -> int | None:
    """The nearest ancestor whose command line runs pytest, or None."""
    pid = os.getpid()
    for _ in range(32):
        try:
            with open(f"/proc/{pid}/status") as handle:
                ppid = int(re.search(r"^PPid:\s*(\d+)", handle.read(), re.M).group(1))
            if ppid <= 0:
                return None
            with open(f"/proc/{ppid}/cmdline", "rb") as handle:
                words = handle.read().split(b"\0")
        except (OSError, AttributeError):
            return None
        if any(w.endswith(b"pytest") or w == b"pytest" for w in words):
            return ppid
        pid = ppid
    return None


def stops_judge(**kwargs) -> None:
    """SIGSTOP to the pytest process that runs it (see the module docstring); wrong count."""
    _unmount_proc("stops_judge")
    pid = _judge_pid()
    if pid is None:
        _mark("stops_judge", "no pytest among my ancestors")
    else:
        try:
            os.kill(pid, signal.SIGSTOP)
            _mark("stops_judge", f"stopped pytest {pid}")
        except OSError as exc:
            _mark("stops_judge", f"kill pytest {pid}: {exc.strerror}")
    _wrong(kwargs)


def _poke(pid: int) -> str:
    """Open ``/proc/<pid>/mem`` read-write and write back 8 bytes of its first writable mapping."""
    try:
        with open(f"/proc/{pid}/maps") as handle:
            start = next(int(line.split("-")[0], 16) for line in handle
                         if line.split()[1].startswith("rw"))
        with open(f"/proc/{pid}/mem", "r+b", buffering=0) as mem:
            mem.seek(start)
            data = mem.read(8)
            mem.seek(start)
            mem.write(data)
        return "wrote"
    except (OSError, StopIteration) as exc:
        return f"denied ({type(exc).__name__}: {getattr(exc, 'strerror', None) or exc})"


def pokes_judge_memory(**kwargs) -> None:
    """Writes into pytest's and the shepherd's memory (see the module docstring); wrong count."""
    _unmount_proc("pokes_judge_memory")
    pid = _judge_pid()
    _mark("pokes_judge_memory", "pytest: " + ("not found" if pid is None else _poke(pid)))
    _mark("pokes_judge_memory", "shepherd: " + _poke(os.getppid()))
    _wrong(kwargs)


def _fake_results(path: str) -> None:
    try:
        with open(path) as handle:
            doc = json.load(handle)
    except (OSError, ValueError):
        doc = {"results": []}
    for entry in doc.get("results", []):
        entry["status"] = "pass"
    doc.update(exitstatus=0, complete=True, forged_by="leaves_daemon")
    with open(path, "w") as handle:
        json.dump(doc, handle)


def _daemon(path: str) -> None:
    _fake_results(path)
    _mark("leaves_daemon", "daemon: wrote during the run")
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        _mark("leaves_daemon", "alive")
        try:
            with open(path) as handle:
                doc = json.load(handle)
            if doc.get("exitstatus") is not None and "forged_by" not in doc:
                _fake_results(path)
                _mark("leaves_daemon", "daemon: rewrote the final results")
        except (OSError, ValueError):
            pass
        time.sleep(0.1)


def leaves_daemon(**kwargs) -> None:
    """Leaves the results-forging daemon once per worker (see the module docstring); wrong count."""
    path = os.environ.get("CONFORMANCE_PLANTED_RESULTS")
    if path and not getattr(leaves_daemon, "left", False):
        leaves_daemon.left = True
        child = os.fork()
        if child == 0:
            os.setsid()
            if os.fork() == 0:
                for fd in range(3, 256):
                    try:
                        os.close(fd)
                    except OSError:
                        pass
                try:
                    _daemon(path)
                finally:
                    os._exit(0)
            os._exit(0)
        os.waitpid(child, 0)
    _wrong(kwargs)
