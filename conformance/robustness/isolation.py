"""Crash isolation: run a planner in a child process with a timeout, so a segfault, a CUDA illegal
address or a hang fails that one case as ``crash`` / ``timeout`` and the run goes on; and, since the
harness builds every tensor, snapshots it and judges it in its own process, a planner in the child
cannot reach the judge, the goldens or the comparison (:mod:`conformance.robustness.isolated_case`).

Which cases run isolated (:func:`should_isolate`): every case of an external planner
(``module:attr``), always: ``--no-isolate`` applies to the built-in planners only, since an
external planner's code never runs in the harness's process; every case tagged ``hazard`` (spec
section 6: the inputs on which upstream-style kernels read out of bounds), unless ``--no-isolate``;
every case with ``--isolate``. The pytest options live in :mod:`conformance.plugin.isolation_options`.

:class:`Worker` is one child per planner (:mod:`conformance.robustness.isolation_worker`, started
with ``subprocess`` -- never ``fork``, since CUDA cannot be used in a forked child once
initialised -- in a session of its own, behind a shepherd process that is all the planner can see
of its parents), long-lived: torch and the planner are imported once, so an isolated case costs one
round trip per call plus the case itself. A worker that crashed, timed out, stopped or signalled its
parent, or changed process-global torch state is replaced before the next case. Its stdout /
stderr go to an unlinked temporary file (nothing is left behind, even when the parent is killed);
its replies come on a pipe of their own, its requests and the tensors' file descriptors on a Unix
socket. Under ``--sanitize`` the worker runs under compute-sanitizer, whose report lands in the same
file between the worker's case markers (:mod:`conformance.robustness.sanitizer`).
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

from conformance.engine.rerun import POISON_SEED_VARIABLE
from conformance.robustness import sandbox
from conformance.robustness.isolation_worker import CLEAN_UP, MARK, PROTOCOL
from conformance.robustness.sanitizer import AccessError, parse_memcheck
from conformance.robustness.shared_tensors import send, socket_pair

DEFAULT_TIMEOUT = 60.0
STARTUP_TIMEOUT = 300.0
"""Seconds the worker may take to import torch and the harness (not counted in a case's timeout)."""
SETTLE_SECONDS = 0.2
"""Under a sanitizer: how long the log must stay unchanged after a reply before the case's part of
it is read (the sanitizer's front end may print a moment after the worker replied)."""
TAIL_LINES = 15


class IsolationFailure(AssertionError):
    """A case that crashed, hung or errored in the child; ``str()`` is the whole report."""


class WorkerUnavailable(RuntimeError):
    """The worker did not start (import failure, protocol mismatch, sanitizer refusal)."""


class ChildLost(BaseException):
    """The worker crashed, hung, stopped or failed during a call: ``answer`` is the case's answer
    (``status`` crash / timeout / error, ``reason``, ``text``, ``tail``). A BaseException, so that
    the observer (which records a planner's Exceptions) lets it through to the isolated runner."""

    def __init__(self, answer: dict) -> None:
        super().__init__(answer.get("reason") or answer["status"])
        self.answer = answer


def is_external(planner: str) -> bool:
    """Whether ``planner`` names an external ``module:attr`` (not a built-in)."""
    return ":" in planner


def should_isolate(tags: tuple[str, ...], planner: str, isolate: bool, no_isolate: bool) -> bool:
    """Whether a case with ``tags`` runs in a child: an external planner's always; ``--no-isolate``
    no built-in planner's, ``--isolate`` all, else the cases tagged ``hazard``."""
    if is_external(planner):
        return True
    if no_isolate:
        return False
    return isolate or "hazard" in tags


def worker_env(planner: str, cuda: bool) -> dict[str, str]:
    """The worker's environment: the parent's, with this interpreter's ``sys.path`` on
    ``PYTHONPATH``, faulthandler on, and ``TRITON_INTERPRET=1`` for an external planner when torch
    sees no CUDA device and the variable is unset (a Triton kernel then runs under the interpreter
    instead of failing with "0 active drivers")."""
    env = dict(os.environ)
    env.pop(POISON_SEED_VARIABLE, None)  # the planner never learns the fills' seed
    env["PYTHONPATH"] = os.pathsep.join([p for p in sys.path if p] +
                                        [env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    env["PYTHONFAULTHANDLER"] = "1"
    if is_external(planner) and not cuda:
        env.setdefault("TRITON_INTERPRET", "1")
    return env


class Worker:
    """The child process running one planner's cases (see the module docstring).

    Args:
        planner: the planner's name (the worker is never handed another planner's case).
        prefix: argv to run the worker under (e.g. compute-sanitizer's), or empty.
        env: the worker's environment (:func:`worker_env`).
        sandbox: the worker's ``--sandbox`` (namespace, require or none,
            :mod:`conformance.robustness.isolation_worker`); what it got is :attr:`where`.
    """

    def __init__(self, planner: str, prefix: list[str], env: dict[str, str],
                 sandbox: str = "none", off_reason: str | None = None) -> None:
        self.planner, self.prefix, self.env, self.sandbox = planner, list(prefix), env, sandbox
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

    def spawn(self) -> None:
        """Start a worker now, without waiting for it (it imports while other tests run)."""
        if self.proc is not None and self.proc.poll() is None:
            return
        self._close_fds()
        self.where = self.watched = None
        log = tempfile.TemporaryFile(prefix="conformance-isolate-")  # unlinked at once
        self.log = os.dup(log.fileno())
        log.close()
        fcntl.fcntl(self.log, fcntl.F_SETFL, fcntl.fcntl(self.log, fcntl.F_GETFL) | os.O_APPEND)
        read_end, write_end = os.pipe()
        ours, theirs = socket_pair()
        cmd = [*self.prefix, sys.executable, "-m", "conformance.robustness.isolation_worker",
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
            names = [_signal_name(n) for n in range(1, 65) if pending >> (n - 1) & 1]
            return (f"the planner sent {', '.join(names)} to the worker's parent process "
                    "(os.getppid())")
        return None

    def close(self) -> None:
        """End the worker (stdin EOF, then SIGKILL after 5 s) and drop its log."""
        if self.proc is not None and self.proc.poll() is None:
            try:
                self.proc.stdin.close()
                self.proc.wait(timeout=5)
            except (subprocess.TimeoutExpired, BrokenPipeError):
                self.kill()
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
        """The last :data:`TAIL_LINES` lines of the log since byte ``offset``, markers left out."""
        lines = [ln for ln in self.log_text(offset).splitlines() if not ln.startswith(MARK)]
        return "\n".join(lines[-TAIL_LINES:])

    def run(self, request: dict, timeout: float, sanitized: bool = False) -> dict:
        """Run one case (``request`` from :func:`conformance.robustness.isolated_case.case_request`)
        with its planner in this worker and observe it from here.

        Returns:
            the answer: ``status`` observed (with ``observation``, an
            :class:`conformance.engine.observe.Observation` made in this process, and ``device``)
            / error / case-error / crash / timeout, ``text``, ``state_changed``; crash and timeout
            also carry ``reason`` (signal, exit code, seconds) and ``tail`` (last lines); with
            ``sanitized``, ``access_errors`` (the sanitizer's reports printed while this case
            ran, :class:`AccessError` as dicts). After a crash, a timeout or changed torch state
            a fresh worker is started at once.

        Raises:
            WorkerUnavailable: the worker did not start.
        """
        from conformance.robustness.isolated_case import observe_in

        self.ensure_ready()
        self.cases += 1
        offset = self.log_size()
        # the worker can read its own log: no case id or file ever goes there
        os.write(self.log, f"{MARK} case {self.cases} ===\n".encode())
        answer = observe_in(self, request, time.monotonic() + timeout, timeout)
        if sanitized:
            answer["access_errors"] = [e.to_json() for e in self._access_errors(offset)]
        if answer["status"] in ("crash", "timeout") or answer.get("state_changed"):
            self.kill()
            self.spawn()
        return answer

    def begin(self, device: str) -> None:
        """Tell the worker a case starts (its tensors live on ``device``)."""
        self._send({"begin": self.cases, "device": device}, [], None)

    def call(self, message: dict, fds: list[int], deadline: float, timeout: float) -> dict:
        """One call of the planner: send ``message`` and ``fds``, wait for the reply until
        ``deadline``.

        Raises:
            ChildLost: the worker died, hung, was stopped or signalled (its case's answer).
        """
        offset = self.log_size()  # before the send: a fast crash writes its stack at once
        self._send(message, fds, timeout)
        return self._reply(deadline, timeout, offset)

    def end(self, deadline: float, timeout: float) -> list[str]:
        """End the case; returns the torch state it changed (the worker's report).

        Raises:
            ChildLost: as :meth:`call`.
        """
        offset = self.log_size()
        self._send({"end": self.cases}, [], timeout)
        return self._reply(deadline, timeout, offset).get("state_changed") or []

    def _send(self, message: dict, fds: list[int], timeout: float | None) -> None:
        offset = self.log_size()
        try:
            send(self.sock, message, fds)
        except OSError:  # the worker is gone: its end of the socket closed
            tampered = self.tampered(alive=False)
            if tampered:
                self.kill()
                raise ChildLost({"status": "crash", "reason": f"{tampered}; the worker was "
                                 "killed", "tail": self.tail(offset)}) from None
            raise ChildLost(self._death(offset)) from None

    def _reply(self, deadline: float, timeout: float, offset: int) -> dict:
        """The worker's answer to what was sent when its log was ``offset`` bytes long (the tail
        of a crash or hang is what it wrote since)."""
        line = self._read_line(deadline)
        answer = _json_or_none(line)
        tampered = self.tampered(alive=answer is not None)
        if tampered:
            self.kill()
            raise ChildLost({"status": "crash", "reason": f"{tampered}; the worker was killed",
                             "tail": self.tail(offset)})
        if answer is not None:
            if answer.get("status") == "crash":
                self.proc.wait()
                answer["tail"] = self.tail(offset)
                raise ChildLost(answer)
            if answer.get("status") == "error":
                raise ChildLost(answer)
            return answer
        if line is None:  # no reply in time: a hang
            self.kill()
            raise ChildLost({"status": "timeout", "reason": f"no result after {timeout:g} s; "
                             "killed", "tail": self.tail(offset)})
        raise ChildLost(self._death(offset))

    def _death(self, offset: int) -> dict:
        """The answer of a worker that is dying (EOF, garbage, a closed socket)."""
        try:
            code = self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.kill()
            code = self.proc.returncode
        if code < 0:
            reason = f"killed by signal {-code} ({signal.Signals(-code).name})"
        else:
            reason = f"exited with code {code}"
        return {"status": "crash", "reason": reason, "tail": self.tail(offset)}

    def _access_errors(self, offset: int) -> list[AccessError]:
        size, still = self.log_size(), time.monotonic() + SETTLE_SECONDS
        while time.monotonic() < still:
            time.sleep(SETTLE_SECONDS / 4)
            if self.log_size() != size:
                size, still = self.log_size(), time.monotonic() + SETTLE_SECONDS
        text = self.log_text(offset)
        begin = f"{MARK} begin {self.cases} ==="
        text = text.split(begin, 1)[-1]
        return parse_memcheck(text)[0]


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def _json_or_none(line: str | None) -> dict | None:
    if not line:
        return None
    try:
        value = json.loads(line)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


class WorkerPool:
    """One :class:`Worker` per planner, created on first use; :meth:`close` ends them all.

    Args:
        prefix: argv every worker runs under (compute-sanitizer's), or empty; with a prefix the
            workers also get ``PYTORCH_NO_CUDA_MEMORY_CACHING=1``.
        cuda: whether torch sees a CUDA device here (see :func:`worker_env`).
        sandbox: ``auto`` (the namespaces on the CPU, where the kernel allows them; none where
            CUDA is used, since legacy CUDA IPC handles do not cross PID namespaces), ``namespace``
            (required: a worker that cannot make them does not start) or ``none``.
    """

    def __init__(self, prefix: list[str] | None = None, cuda: bool = False,
                 sandbox: str = "auto") -> None:
        self.prefix, self.cuda = list(prefix or []), cuda
        self.workers: dict[str, Worker] = {}
        self.sandbox, self.off_reason = sandbox_mode(sandbox, cuda)
        self._closed: dict[str, str] = {}

    def sandboxes(self) -> dict[str, str]:
        """What each worker that started got (planner -> ``user+pid namespace`` / ``none: why``),
        closed ones included."""
        return {**self._closed, **{p: w.where for p, w in self.workers.items() if w.where}}

    def get(self, planner: str) -> Worker:
        """The worker for ``planner`` (created, not yet started, on first use)."""
        if planner not in self.workers:
            env = worker_env(planner, self.cuda)
            if self.prefix:
                # Under a sanitizer every tensor gets its own cudaMalloc: torch's caching allocator
                # packs tensors into shared 2 MiB segments, inside which memcheck sees no bounds.
                env["PYTORCH_NO_CUDA_MEMORY_CACHING"] = "1"
            self.workers[planner] = Worker(planner, self.prefix, env, self.sandbox,
                                           self.off_reason)
        return self.workers[planner]

    def close(self) -> None:
        self._closed = self.sandboxes()
        for w in self.workers.values():
            w.close()
        self.workers.clear()


def sandbox_mode(option: str, cuda: bool) -> tuple[str, str | None]:
    """(the workers' ``--sandbox``, why it is none when not tried) for the ``--sandbox`` option
    (``auto`` / ``namespace`` / ``none``) on a machine where torch does (``cuda``) or does not see
    a CUDA device."""
    if option == "none":
        return "none", "--sandbox none"
    if option == "namespace":
        return "require", None
    if cuda:
        return "none", ("CUDA IPC handles are not known to open across PID namespaces on "
                        "every driver (--sandbox namespace to try: they do on an H200, driver "
                        "580.159, reports/gpu/2026-12-02-b)")
    if not sys.platform.startswith("linux"):
        return "none", "not Linux"
    return "namespace", None


_SHARED: WorkerPool | None = None


def shared_pool() -> WorkerPool:
    """The process's pool for callers outside pytest (``python -m conformance fuzz --isolate``):
    created on first use, closed at interpreter exit."""
    global _SHARED
    if _SHARED is None:
        import atexit

        import torch

        _SHARED = WorkerPool(cuda=torch.cuda.is_available())
        atexit.register(_SHARED.close)
    return _SHARED
