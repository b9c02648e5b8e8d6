"""The fuzzer's goldens, computed where the planner under test cannot reach them.

A fuzz-found case's golden is the pure-Python planner's output. Computed in the fuzzing process, it
would come from whatever the subject's ``python_planner`` module is after the planner under test was imported: a
planner that patches its ``launch`` (or anything it calls) would write its own
wrong output as the golden, and never diverge. So the golden comes from a child process,
``python -m conformance.robustness.golden_process``, that imports the pure-Python planner and the
harness but never a planner under test, started before any plan runs.

Protocol: one JSON object per line. The parent sends ``{"raw": CASE}`` (a launcher case dict
without ``expect``); the child answers ``{"expect": [...]}`` (one expectation per step, as
:func:`conformance.engine.reference.record_expectations` returns) or ``{"error": "Type: message"}``. The
child exits when its standard input closes (the parent ended, however it ended).
"""

from __future__ import annotations

import atexit
import json
import os
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
        self._proc = subprocess.Popen(
            [sys.executable, "-m", "conformance.robustness.golden_process"], cwd=REPO_ROOT, env=env,
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._stderr, text=True,
            bufsize=1)
        atexit.register(self.close)

    def expectations(self, raw: dict) -> list[dict]:
        """The golden of every step of the launcher case ``raw`` (``expect`` ignored).

        Raises:
            GoldenError: the child died or could not record the case.
        """
        with self._lock:
            try:
                self._proc.stdin.write(json.dumps({"raw": raw}) + "\n")
                self._proc.stdin.flush()
                line = self._proc.stdout.readline()
            except (BrokenPipeError, ValueError):
                line = ""
        if not line:
            self._end_child()
            self._stderr.seek(0)
            tail = self._stderr.read().strip().splitlines()[-5:]
            self.close()
            raise GoldenError("the golden process (python -m conformance.robustness."
                                 f"golden_process) died: {' | '.join(tail) or 'no output'}")
        answer = json.loads(line)
        if "error" in answer:
            raise GoldenError(f"the reference planner could not record the plan: "
                                 f"{answer['error']}")
        return answer["expect"]

    def close(self) -> None:
        """End the child (it exits on end of input), then close its pipes and its standard error
        file (left open, each prints a ResourceWarning at exit); idempotent."""
        self._end_child()
        for stream in (self._proc.stdin, self._proc.stdout, self._stderr):
            try:
                stream.close()
            except OSError:  # BrokenPipeError: unsent input to a child that is gone
                pass

    def _end_child(self) -> None:
        """Close the child's input and wait for it (SIGKILL after 10 s); idempotent."""
        if self._proc.poll() is None:
            try:
                self._proc.stdin.close()
                self._proc.wait(timeout=10)
            except (OSError, subprocess.TimeoutExpired):
                self._proc.kill()
                self._proc.wait()


@cache
def golden_process() -> GoldenProcess:
    """This process's golden child process, started on first use."""
    return GoldenProcess()


def _serve(stdin, stdout) -> None:
    from conformance.corpus.case_model import make_case
    from conformance.engine.reference import record_expectations

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
