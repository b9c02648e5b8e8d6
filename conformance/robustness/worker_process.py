"""The isolation worker's process: started with ``subprocess`` (never ``fork``: CUDA cannot be
used in a forked child once initialised) in a session of its own, behind a shepherd process that
is all the planner can see of its parents, with ``-P`` (its sys.path the harness's, passed as
PYTHONPATH, without its working directory first: the planner module it imports is the file the
harness digests); its handshake, its log (an unlinked temporary file the
child and a sanitizer around it write to), its death, and what the planner did to its parent.
Calls and the case protocol are :mod:`conformance.robustness.isolation`'s.
"""

from __future__ import annotations

import fcntl
import json
import os
import select
import signal
import subprocess
import sys
import tempfile
import time

from conformance.robustness import sandbox
from conformance.robustness.isolation_worker import MARK, PROTOCOL
from conformance.robustness.shepherd import CLEAN_UP
from conformance.robustness.after_last_call import (  # noqa: F401 (the worker's names)
    END_SECONDS, LINGER_SECONDS, AfterLastCall, signal_name)
from conformance.robustness.worker_socket import socket_pair

STARTUP_TIMEOUT = 300.0
"""Seconds the worker may take to import torch and the harness (not counted in a case's timeout)."""
TAIL_LINES = 15
"""How many of the log's last lines a crash or a refusal shows."""


class WorkerUnavailable(RuntimeError):
    """The worker did not start (import failure, protocol mismatch, sanitizer refusal)."""


class ChildLost(BaseException):
    """The worker crashed, hung, stopped or failed during a call: ``answer`` is the case's answer
    (``status`` crash / timeout / error, ``reason``, ``text``, ``tail``). A BaseException, so that
    the observer (which records a planner's Exceptions) lets it through to the isolated runner."""

    def __init__(self, answer: dict) -> None:
        super().__init__(answer.get("reason") or answer["status"])
        self.answer = answer


class WorkerProcess(AfterLastCall):
    """The child process that runs one planner's cases: its start, handshake, death and log (the
    calls themselves are :class:`conformance.robustness.isolation.Worker`'s).

    Args:
        planner: the planner's name (the worker is never handed another planner's case).
        prefix: argv to run the worker under (e.g. compute-sanitizer's), or empty.
        env: the worker's environment (:func:`conformance.robustness.isolation.worker_env`).
        sandbox: the worker's ``--sandbox`` (namespace, require or none,
            :mod:`conformance.robustness.isolation_worker`); what it got is :attr:`where`.
        linger: seconds :meth:`close` waits for a death after the last case (>= 0).
    """

    def __init__(self, planner: str, prefix: list[str], env: dict[str, str],
                 sandbox: str = "none", off_reason: str | None = None,
                 linger: float = LINGER_SECONDS) -> None:
        self.planner, self.prefix, self.env, self.sandbox = planner, list(prefix), env, sandbox
        self.linger = linger  # seconds close() waits for a death after the last case
        self.off_reason = off_reason  # why the sandbox is "none", when it was not tried
        self.where: str | None = None  # the worker's sandbox, from its handshake
        self.watched: int | None = None  # the shepherd: the parent the planner sees
        self.proc: subprocess.Popen | None = None
        self.log: int | None = None
        self.reply: int | None = None
        self.sock = None
        self.pid: int | None = None
        self.cases = 0
        self._buffer, self._ready = b"", False
        self.after_last_call_init()

    def spawn(self) -> None:
        """Start a worker now, without waiting for it (it imports while other tests run)."""
        if self.proc is not None and self.proc.poll() is None:
            return
        self._note_death("before the next case began")
        self._close_fds()
        self.where = self.watched = None
        self.ending, self.last_owner = False, None
        log = tempfile.TemporaryFile(prefix="conformance-isolate-")  # unlinked at once
        self.log = os.dup(log.fileno())
        log.close()
        fcntl.fcntl(self.log, fcntl.F_SETFL, fcntl.fcntl(self.log, fcntl.F_GETFL) | os.O_APPEND)
        read_end, write_end = os.pipe()
        ours, theirs = socket_pair()
        cmd = [*self.prefix, sys.executable, "-P", "-m", "conformance.robustness.isolation_worker",
               "--reply-fd", str(write_end), "--sock-fd", str(theirs.fileno()),
               "--sandbox", self.sandbox]
        try:
            self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=self.log,
                                         stderr=self.log, pass_fds=(write_end, theirs.fileno()),
                                         env=self.env, start_new_session=True)
        finally:
            os.close(write_end)
            theirs.close()
        self.reply, self.sock, self._buffer, self._ready = read_end, ours, b"", False
        hello = {"hello": {"protocol": PROTOCOL, "planner": self.planner}}
        self.proc.stdin.write((json.dumps(hello) + "\n").encode())
        self.proc.stdin.flush()

    def _close_fds(self) -> None:
        for fd in (self.log, self.reply):
            if fd is not None:
                os.close(fd)
        if self.sock is not None:
            self.sock.close()
        self.log = self.reply = self.sock = None

    def ensure_ready(self) -> None:
        """Start the worker if needed and wait for its handshake.

        Raises:
            WorkerUnavailable: it exited, refused the protocol or did not answer in
                :data:`STARTUP_TIMEOUT` seconds (the message holds the last lines it printed).
        """
        if self.proc is None or self.proc.poll() is not None:
            self.spawn()
        if self._ready:
            return
        line = self._read_line(time.monotonic() + STARTUP_TIMEOUT)
        answer = _json_or_none(line)
        if not answer or not answer.get("ready") or answer.get("protocol") != PROTOCOL:
            self.kill()
            why = (answer or {}).get("refused") or (
                f"no handshake (got {line[:200]!r})" if line else "it exited before its handshake")
            raise WorkerUnavailable(f"isolation worker for {self.planner} did not start: {why}"
                                    + (f"\n{self.tail(0)}" if self.tail(0) else ""))
        self.pid, self._ready = answer["pid"], True
        self.where = str(answer.get("sandbox") or "none: the worker did not say")
        if self.sandbox == "none" and self.off_reason:
            self.where = f"none: {self.off_reason}"
        self.watched, self.pid = self._outer_pids(answer["pid"])

    def _outer_pids(self, reported: int) -> tuple[int, int]:
        """(the shepherd's pid, the worker's) as this process sees them: the process it started
        and the worker's own report, or, in a sandbox (whose pids are not ours), that process's
        grandchild (outside -> PID 1 -> shepherd) and the shepherd's child."""
        if not self.where.startswith(sandbox.NAMESPACE):
            return self.proc.pid, reported
        pids = [self.proc.pid]
        for _ in range(3):
            below = sandbox.children(pids[-1])
            if not below:
                return self.proc.pid, reported  # no children file: watch the process we started
            pids.append(below[0])
        return pids[2], pids[3]

    def _read_line(self, deadline: float) -> str | None:
        """The next reply line; None when ``deadline`` passes, ``""`` at EOF (the child died)."""
        while b"\n" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self.reply], [], [], left)[0]:
                return None
            chunk = os.read(self.reply, 65536)
            if not chunk:
                return ""
            self._buffer += chunk
        line, _, self._buffer = self._buffer.partition(b"\n")
        return line.decode()

    def kill(self) -> None:
        """Kill the worker and its shepherd (their whole process group, if running) and wait.
        Outside a sandbox the shepherd is first told to kill every descendant (its adopted orphans
        are in no group of ours); in one, the end of its PID 1 kills them."""
        self.ending = True
        self.parting.drop()
        if self.proc is not None and self.proc.poll() is None:
            if self.watched and not (self.where or "").startswith(sandbox.NAMESPACE):
                try:
                    os.killpg(self.proc.pid, signal.SIGCONT)  # a stopped shepherd cannot clean up
                    os.kill(self.watched, CLEAN_UP)
                    self.proc.wait(timeout=2)
                except (OSError, subprocess.TimeoutExpired):
                    pass
        if self.proc is not None and self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                self.proc.kill()
        if self.proc is not None:
            self.proc.wait()
        self._ready = False

    def await_exit(self) -> None:
        """Wait for a worker that replied it crashed, which exits right after that reply; one
        still running after :data:`END_SECONDS` is killed, never waited for past every timeout
        (the planner can write a reply line itself: tests/test_hostile22.py)."""
        try:
            self.proc.wait(timeout=END_SECONDS)
        except subprocess.TimeoutExpired:
            self.kill()

    def tampered(self, alive: bool = True) -> str | None:
        """What the planner did to the worker's parent (the shepherd), or None: it is stopped,
        holds a pending signal (the shepherd takes none but SIGCHLD, so any signal sent to it is
        still pending when the sender's ``kill()`` has returned), or -- when the worker is known
        to be ``alive`` (it just replied) -- died (a dead worker's shepherd dies too, so then the
        exit status tells)."""
        if self.proc is None:
            return None
        try:
            with open(f"/proc/{self.watched or self.proc.pid}/status") as handle:
                fields = dict(line.split(":", 1) for line in handle if ":" in line)
        except OSError:
            fields = {"State": "X"}
        state = fields.get("State", "").split()
        if state and state[0] in ("Z", "X"):
            return ("the worker's parent process died while the worker lived (the planner "
                    "killed os.getppid())") if alive else None
        if state and state[0] in ("T", "t"):
            return "the planner stopped the worker's parent process (SIGSTOP to os.getppid())"
        pending = int(fields.get("ShdPnd", "0"), 16) | int(fields.get("SigPnd", "0"), 16)
        pending &= ~(1 << (signal.SIGCHLD - 1))
        if pending:
            names = [signal_name(n) for n in range(1, 65) if pending >> (n - 1) & 1]
            return (f"the planner sent {', '.join(names)} to the worker's parent process "
                    "(os.getppid())")
        return None

    def close(self) -> None:
        """End the worker and drop its log: first wait until :attr:`linger` seconds have passed
        since its last case ended (a death in that time is that case's, :attr:`deaths`), then
        stdin EOF, then SIGKILL after :data:`END_SECONDS`. A worker that, told to end, exits with
        another code than 0, is killed by a signal or does not end in that time (it hung, or the
        planner stopped it or its parent: tests/test_hostile13.py) is a death of its last case
        too (a non-zero exit not under a ``prefix``: compute-sanitizer may exit non-zero for the
        errors its log reports, which are each case's own)."""
        if self.proc is not None and self.proc.poll() is None and self.last_owner is not None:
            try:
                self.proc.wait(timeout=max(0.0, self.last_end + self.linger - time.monotonic()))
            except subprocess.TimeoutExpired:
                pass
        self._note_death("after the run's last case")
        self._note_state("after the run's last case")
        self.deaths += self.parting.check()
        if self.proc is not None and self.proc.poll() is None:
            tampered = self.tampered(alive=True)  # a stopped shepherd cannot end either
            wait = END_SECONDS * (12 if self.prefix else 1)  # a sanitizer reports as it ends
            try:
                self.proc.stdin.close()
            except BrokenPipeError:  # it is ending already
                pass
            try:
                self.proc.wait(timeout=wait)
            except subprocess.TimeoutExpired:
                self._note_hang(wait, tampered)
                self.kill()
            if not self.prefix:  # a sanitizer's own exit code says what its log says
                self._note_death("when it was told to end", told=True)
        self.ending = True
        self._close_fds()

    def log_size(self) -> int:
        return os.fstat(self.log).st_size if self.log is not None else 0

    def log_text(self, offset: int) -> str:
        """What the child (and a sanitizer around it) wrote to the log since byte ``offset``."""
        if self.log is None:
            return ""
        return os.pread(self.log, max(0, self.log_size() - offset), offset).decode(
            errors="replace")

    def tail(self, offset: int) -> str:
        """The last :data:`TAIL_LINES` lines of the log since byte ``offset``, markers left out
        (:func:`crash_tail`)."""
        return crash_tail(self.log_text(offset))


EXTENSIONS = "Extension modules:"
"""How faulthandler's line listing the loaded extension modules begins."""


def crash_tail(text: str) -> str:
    """The last :data:`TAIL_LINES` lines of a worker's log ``text``, its protocol markers left
    out, and faulthandler's list of loaded extension modules (one line of often 2,000 characters
    after a fatal signal's stack, CPython 3.10+) cut to its count."""
    lines = []
    for line in text.splitlines():
        if line.startswith(MARK):
            continue
        if line.startswith(EXTENSIONS) and len(line) > 200:
            count = line.rsplit("(total: ", 1)[-1].rstrip(")") if "(total: " in line else "?"
            line = f"{EXTENSIONS} ({count} listed by faulthandler, left out here)"
        lines.append(line)
    return "\n".join(lines[-TAIL_LINES:])



def _json_or_none(line: str | None) -> dict | None:
    if not line:
        return None
    try:
        value = json.loads(line)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None
