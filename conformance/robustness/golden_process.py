"""The fuzzer's goldens, computed where the planner under test cannot reach them.

A fuzz-found case's golden is the pure-Python planner's output. Computed in the fuzzing process, it
would come from whatever the subject's ``python_planner`` module is after the planner under test was imported: a
planner that patches its ``launch`` (or anything it calls) would write its own
wrong output as the golden, and never diverge. So the golden comes from a child process,
``python -m conformance.robustness.golden_process``, that imports the pure-Python planner and the
harness but never a planner under test, started before any plan runs.

Its two ends of the conversation are one Unix socket, never pipes: a pipe of another process can
be opened through ``/proc/<pid>/fd/N`` by any process of the same user, and without a PID
namespace (``--sandbox none``, every GPU host by default) the planner's worker found the golden
process there, stopped it and answered fuzz's requests itself with goldens of its own
(tests/test_hostile23.py); a socket cannot be opened that way. The child makes itself
non-dumpable (``PR_SET_DUMPABLE`` 0: no ``ptrace``, no ``/proc/<pid>/mem`` for a process of the
same user without ``CAP_SYS_PTRACE``) and says ``{"ready": true}`` once it has imported what it
records with, before the parent goes on to import or probe any planner. Not stopped: a root
worker without the sandbox keeps ``CAP_SYS_PTRACE`` (docs/robustness.md), and with it can take
the socket (``pidfd_getfd``) or the process; a worker that stops the child hangs fuzz.

Protocol: one JSON object per line; the child's first is ``{"ready": true}``. The parent sends ``{"raw": CASE}`` (a launcher case dict
without ``expect``); the child answers ``{"expect": [...]}`` (one expectation per step, as
:func:`conformance.engine.reference.record_expectations` returns) or ``{"error": "Type: message"}``. The
child exits at the end of its standard input (the parent ended, however it ended).
"""

from __future__ import annotations

import atexit
import json
import os
import socket
import subprocess
import sys
import tempfile
import threading
from functools import cache
from pathlib import Path

from conformance.paths import REPO_ROOT

_SCRATCH = "<fuzz>"


class GoldenError(RuntimeError):
    """The golden process failed: it died, or could not record a plan (the message says
    which, with its last lines of standard error)."""


class GoldenProcess:
    """A child process that records goldens with the pure-Python planner (see module doc)."""

    def __init__(self) -> None:
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO_ROOT), env.get("PYTHONPATH"))
                                            if p)
        self._lock = threading.Lock()
        self._stderr = tempfile.TemporaryFile(mode="w+")  # a pipe could fill and block the child
        ours, theirs = socket.socketpair()
        try:
            self._proc = subprocess.Popen(
                [sys.executable, "-m", "conformance.robustness.golden_process"], cwd=REPO_ROOT,
                env=env, stdin=theirs, stdout=theirs, stderr=self._stderr)
        finally:
            theirs.close()
        self._sock = ours
        self._in = ours.makefile("w", encoding="utf-8")
        self._out = ours.makefile("r", encoding="utf-8")
        atexit.register(self.close)
        self._answer("started")  # {"ready": true}: imported, non-dumpable

    def _answer(self, what: str) -> dict:
        """The child's next line as JSON; GoldenError when it died first (``what`` it was doing)."""
        try:
            line = self._out.readline()
        except (OSError, ValueError):
            line = ""
        if not line:
            self._end_child()
            self._stderr.seek(0)
            tail = self._stderr.read().strip().splitlines()[-5:]
            self.close()
            raise GoldenError("the golden process (python -m conformance.robustness."
                              f"golden_process) died ({what}): {' | '.join(tail) or 'no output'}")
        return json.loads(line)

    def expectations(self, raw: dict) -> list[dict]:
        """The golden of every step of the launcher case ``raw`` (``expect`` ignored).

        Raises:
            GoldenError: the child died or could not record the case.
        """
        with self._lock:
            try:
                self._in.write(json.dumps({"raw": raw}) + "\n")
                self._in.flush()
            except (OSError, ValueError):
                pass  # its answer, read next, says it died
            answer = self._answer("recording a plan")
        if "error" in answer:
            raise GoldenError(f"the reference planner could not record the plan: "
                                 f"{answer['error']}")
        return answer["expect"]

    def close(self) -> None:
        """End the child (it exits on end of input), then close its socket and its standard error
        file (left open, each prints a ResourceWarning at exit); idempotent."""
        self._end_child()
        for stream in (self._in, self._out, self._sock, self._stderr):
            try:
                stream.close()
            except OSError:  # BrokenPipeError: unsent input to a child that is gone
                pass

    def _end_child(self) -> None:
        """End the child's input (the socket shut for writing) and wait for it (SIGKILL after
        10 s); idempotent."""
        if self._proc.poll() is None:
            try:
                self._sock.shutdown(socket.SHUT_WR)
                self._proc.wait(timeout=10)
            except (OSError, subprocess.TimeoutExpired):
                self._proc.kill()
                self._proc.wait()


@cache
def golden_process() -> GoldenProcess:
    """This process's golden child process, started on first use."""
    return GoldenProcess()


def _serve(stdin, stdout) -> None:
    from conformance.robustness.sandbox import non_dumpable

    non_dumpable()
    from conformance.corpus.case_model import make_case
    from conformance.engine.reference import record_expectations

    stdout.write(json.dumps({"ready": True}) + "\n")
    stdout.flush()
    for line in stdin:
        try:
            raw = json.loads(line)["raw"]
            case = make_case({**raw, "expect": {}}, Path(_SCRATCH), "$")
            answer = {"expect": record_expectations(case)}
        except Exception as exc:  # answered, not fatal: the parent raises it
            answer = {"error": f"{type(exc).__name__}: {exc}"}
        stdout.write(json.dumps(answer) + "\n")
        stdout.flush()


if __name__ == "__main__":
    _serve(sys.stdin, sys.stdout)
