"""Crash isolation (issue #7, item 2): run a case in a child process with a timeout, so a segfault,
a CUDA illegal address or a hang fails that one case as ``crash`` / ``timeout`` and the run goes on.

pytest options (registered here, loaded through ``conformance/plugin/hooks.py``'s ``pytest_plugins``):

* ``--isolate``: every case on a planner runs in the child;
* ``--no-isolate``: none does (not even ``hazard`` cases);
* ``--isolate-timeout S`` (default 60): seconds a case may take in the child before it is killed.

By default cases tagged ``hazard`` (spec section 6: the inputs on which upstream-style kernels read
out of bounds) run isolated; the rest run in-process. The shared validator / allocator items never
need it.

The child is one long-lived worker per pytest process (:mod:`conformance.robustness.isolation_worker`, started with
``subprocess`` -- never ``fork``, since CUDA cannot be used in a forked child once initialised):
torch, the harness and each planner are imported once, so an isolated case costs a JSON round trip
plus the case itself. A worker that crashed or timed out is replaced before the next case. A failed
item's report says ``crash`` or ``timeout``, the signal or exit code, and the last lines the child
printed (its stdout / stderr go to a log file, faulthandler's stack included), and its
``user_properties`` get ``("status", "crash" | "timeout")`` for the results file.
"""

from __future__ import annotations

import atexit
import json
import os
import select
import signal
import subprocess
import sys
import tempfile
import time
from functools import partial
from pathlib import Path

import pytest

from conformance.engine.runner import ConformanceFailure, case_dir_arg, rerun_command

DEFAULT_TIMEOUT = 60.0
STARTUP_TIMEOUT = 300.0
"""Seconds the worker may take to import torch and the harness (not counted in a case's timeout)."""
TAIL_LINES = 15


class IsolationFailure(AssertionError):
    """A case that crashed, hung or errored in the child; ``str()`` is the whole report."""


class Worker:
    """One child process running cases (see the module docstring); restarted after a crash."""

    def __init__(self) -> None:
        self.proc: subprocess.Popen | None = None
        self.log = Path(tempfile.mkstemp(prefix="conformance-isolate-", suffix=".log")[1])
        self._buffer, self._ready = b"", False
        atexit.register(self.close)

    def spawn(self) -> None:
        """Start a worker now, without waiting for it (it imports while other tests run)."""
        if self.proc is not None and self.proc.poll() is None:
            return
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join([p for p in sys.path if p] +
                                            [env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
        env["PYTHONFAULTHANDLER"] = "1"
        self._buffer = b""
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "conformance.robustness.isolation_worker", str(self.log)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
        self._ready = False

    def _ensure_ready(self) -> None:
        if self.proc is None or self.proc.poll() is not None:
            self.spawn()
        if self._ready:
            return
        ready = self._read_line(time.monotonic() + STARTUP_TIMEOUT)
        if not ready or not json.loads(ready).get("ready"):
            self._kill()
            raise IsolationFailure(f"isolation worker did not start:\n{self.tail(0)}")
        self._ready = True

    def _read_line(self, deadline: float) -> str | None:
        """The next reply line; None when ``deadline`` passes, ``""`` at EOF (the child died)."""
        fd = self.proc.stdout.fileno()
        while b"\n" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                return None
            chunk = os.read(fd, 65536)
            if not chunk:
                return ""
            self._buffer += chunk
        line, _, self._buffer = self._buffer.partition(b"\n")
        return line.decode()

    def _kill(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
        if self.proc is not None:
            self.proc.wait()

    def close(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.stdin.close()
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self._kill()
        self.log.unlink(missing_ok=True)

    def tail(self, offset: int) -> str:
        """The last :data:`TAIL_LINES` lines the child wrote to its log since byte ``offset``."""
        data = self.log.read_bytes()[offset:].decode(errors="replace")
        return "\n".join(data.splitlines()[-TAIL_LINES:])

    def run(self, request: dict, timeout: float) -> dict:
        """Run one case in the child (see :meth:`_run`); after a crash or a timeout a fresh worker
        is started at once, so it is warm when the next isolated case comes."""
        answer = self._run(request, timeout)
        if answer["status"] in ("crash", "timeout"):
            self.spawn()
        return answer

    def _run(self, request: dict, timeout: float) -> dict:
        """Run one case in the child.

        Returns:
            ``{"status": "passed" | "failed" | "error" | "crash" | "timeout", "text": ...}``; crash
            and timeout also carry ``reason`` (signal, exit code, seconds) and ``tail`` (last lines).
        """
        self._ensure_ready()
        offset = self.log.stat().st_size
        try:
            self.proc.stdin.write((json.dumps(request) + "\n").encode())
            self.proc.stdin.flush()
        except BrokenPipeError:
            pass
        line = self._read_line(time.monotonic() + timeout)
        if line:
            answer = json.loads(line)
            if answer["status"] == "crash":
                self.proc.wait()
                answer["tail"] = self.tail(offset)
            return answer
        if line is None:  # no reply in time: a hang
            self._kill()
            return {"status": "timeout", "reason": f"no result after {timeout:g} s; killed",
                    "tail": self.tail(offset)}
        try:  # EOF: the child is dying
            code = self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self._kill()
            code = self.proc.returncode
        reason = (f"killed by signal {-code} ({signal.Signals(-code).name})" if code < 0
                  else f"exited with code {code}")
        return {"status": "crash", "reason": reason, "tail": self.tail(offset)}


_WORKER: Worker | None = None


def worker() -> Worker:
    """The process's isolation worker (created on first use)."""
    global _WORKER
    if _WORKER is None:
        _WORKER = Worker()
    return _WORKER


def should_isolate(tags: tuple[str, ...], isolate: bool, no_isolate: bool) -> bool:
    """Whether a case with ``tags`` runs in the child: ``--isolate`` all, ``--no-isolate`` none,
    else those tagged ``hazard``."""
    if no_isolate:
        return False
    return isolate or "hazard" in tags


def _run_isolated(item, timeout: float) -> None:
    case = item.case
    request = {"raw": case.raw, "path": str(case.path), "json_path": case.json_path,
               "planner": item.planner, "device": item.avail.device}
    answer = worker().run(request, timeout)
    status = answer["status"]
    if status == "passed":
        return
    if status == "failed":
        raise ConformanceFailure(answer["text"])
    if status in ("crash", "timeout"):
        item.user_properties.append(("status", status))
    lines = [f"{case.id}[{item.planner}]  ({case.location})", f"  {status} (isolated)"
             + (f": {answer['reason']}" if answer.get("reason") else "")]
    if answer.get("text"):
        lines += ["  " + ln for ln in answer["text"].rstrip().splitlines()]
    if answer.get("tail"):
        lines += ["  last lines of output:"] + ["    " + ln for ln in answer["tail"].splitlines()]
    lines.append(f"  rerun: {rerun_command(case.id, item.planner, case_dir_arg(case))} --isolate")
    raise IsolationFailure("\n".join(lines))


def _repr_failure(item, original, excinfo, style=None):
    if isinstance(excinfo.value, IsolationFailure):
        return str(excinfo.value)
    return original(excinfo, style)


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("conformance", "offsets-planner conformance")
    group.addoption("--isolate", action="store_true",
                    help="run every case in a child process (crash / timeout isolation)")
    group.addoption("--no-isolate", action="store_true",
                    help="run every case in-process, hazard cases included")
    group.addoption("--isolate-timeout", type=float, default=DEFAULT_TIMEOUT, metavar="S",
                    help=f"seconds an isolated case may run (default {DEFAULT_TIMEOUT:g})")


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(session, config, items) -> None:
    isolate, no_isolate = config.getoption("isolate"), config.getoption("no_isolate")
    timeout = config.getoption("isolate_timeout")
    isolated = 0
    for item in items:
        avail = getattr(item, "avail", None)
        if avail is None or not avail.available or not hasattr(item, "case"):
            continue  # the shared validator / allocator, a skipped planner, or not a case
        if should_isolate(item.case.tags, isolate, no_isolate):
            item.runtest = partial(_run_isolated, item, timeout)
            item.repr_failure = partial(_repr_failure, item, item.repr_failure)
            isolated += 1
    if isolated:
        worker().spawn()  # imports torch while the in-process cases run


def pytest_unconfigure(config) -> None:
    global _WORKER
    if _WORKER is not None:
        _WORKER.close()
        _WORKER = None
