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
round trip per call plus the case itself (its process: :mod:`conformance.robustness.worker_process`;
its calls: :class:`Worker`). A worker that crashed, timed out, stopped or signalled its
parent, or changed process-global torch state is replaced before the next case. Its stdout /
stderr go to an unlinked temporary file (nothing is left behind, even when the parent is killed);
its replies come on a pipe of their own, its requests and the tensors' file descriptors on a Unix
socket. Under ``--sanitize`` the worker runs under compute-sanitizer, whose report lands in the same
file between the worker's case markers (:mod:`conformance.robustness.sanitizer`).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

from conformance.engine.rerun import POISON_SEED_VARIABLE
from conformance.robustness import outside_view
from conformance.robustness.isolation_worker import MARK
from conformance.robustness.sanitizer import AccessError, parse_memcheck
from conformance.robustness.worker_socket import send
from conformance.robustness.worker_process import (LINGER_SECONDS, ChildLost, WorkerProcess,
                                                   _json_or_none)
from impls.source_file import child_pythonpath

DEFAULT_TIMEOUT = 60.0
SETTLE_SECONDS = 0.2
"""Under a sanitizer: how long the log must stay unchanged after a reply before the case's part of
it is read (the sanitizer's front end may print a moment after the worker replied)."""


class IsolationFailure(AssertionError):
    """A case that crashed, hung or errored in the child; ``str()`` is the whole report."""


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
    ``PYTHONPATH`` (:func:`impls.source_file.child_pythonpath`: the worker starts with
    ``-P``), faulthandler on, and ``TRITON_INTERPRET=1`` for an external planner when torch
    sees no CUDA device and the variable is unset (a Triton kernel then runs under the interpreter
    instead of failing with "0 active drivers")."""
    env = dict(os.environ)
    env.pop(POISON_SEED_VARIABLE, None)  # the planner never learns the fills' seed
    env["PYTHONPATH"] = child_pythonpath(env.get("PYTHONPATH"))
    env["PYTHONFAULTHANDLER"] = "1"
    if is_external(planner) and not cuda:
        env.setdefault("TRITON_INTERPRET", "1")
    return env


class Worker(WorkerProcess):
    """The child process running one planner's cases (see the module docstring): its process is
    :class:`~conformance.robustness.worker_process.WorkerProcess`'s, its calls are here."""

    def run(self, request: dict, timeout: float, sanitized: bool = False,
            owner=None) -> dict:
        """Run one case (``request`` from :func:`conformance.robustness.isolated_case.case_request`)
        with its planner in this worker and observe it from here.

        Returns:
            the answer: ``status`` observed (with ``observation``, an
            :class:`conformance.engine.observe.Observation` made in this process, and ``device``)
            / error / case-error / crash / timeout, ``text``, ``state_changed``; crash and timeout
            also carry ``reason`` (signal, exit code, seconds) and ``tail`` (last lines); with
            ``sanitized``, ``access_errors`` (the sanitizer's reports printed while this case
            ran, :class:`AccessError` as dicts). After a crash, a timeout or changed torch state
            a fresh worker is started at once; otherwise a later death of the worker before its
            next case (or before :meth:`close`) is recorded as ``owner``'s
            (:attr:`~conformance.robustness.worker_process.WorkerProcess.deaths`).

        Raises:
            WorkerUnavailable: the worker did not start.
        """
        from conformance.robustness.isolated_case import observe_in

        self.deaths += self.parting.check()  # the last case's storages, read once more
        if self._note_state("before the next case began"):
            self.kill()  # its state is not the next case's to start from: a fresh worker
        self.ensure_ready()
        self.owner = owner
        self.cases += 1
        offset = self.log_size()
        # the worker can read its own log: no case id or file ever goes there
        mark = f"{MARK} case {self.cases} ===\n".encode()
        os.write(self.log, mark)
        view = outside_view.read(self.pid)  # the kernel's word, not the worker's report
        answer = observe_in(self, request, time.monotonic() + timeout, timeout)
        if answer["status"] == "observed":
            self.last_view = outside_view.read(self.pid)
            moved = [f"{outside_view.WHERE}: {c}"
                     for c in outside_view.changed(view, self.last_view)]
            answer["state_changed"] = [*(answer.get("state_changed") or []), *moved]
        if sanitized:
            answer["access_errors"] = [e.to_json() for e in self._access_errors(offset)]
        if self.log_size() < offset or os.pread(self.log, len(mark), offset) != mark:
            # the log is appended to only: its case mark moved or went with a truncation
            answer = {"status": "crash", "reason": "the worker's log (its stdout and stderr, where "
                      "a sanitizer reports) shrank or was rewritten during the case: truncated "
                      "from inside the worker, so what was printed there is lost", "tail": ""}
        if answer["status"] in ("crash", "timeout") or answer.get("state_changed"):
            self.kill()
            self.spawn()
        else:
            self.case_ended()  # a death from now on is this case's (WorkerProcess.close)
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
        # after a reply of changed state or of a crash the worker ends itself (os._exit(3)), and
        # its shepherd with it: a dead parent is no tampering then
        ends = answer is not None and bool(answer.get("state_changed")
                                           or answer.get("status") == "crash")
        tampered = self.tampered(alive=answer is not None and not ends)
        if tampered:
            self.kill()
            raise ChildLost({"status": "crash", "reason": f"{tampered}; the worker was killed",
                             "tail": self.tail(offset)})
        if answer is not None:
            if answer.get("status") == "crash":
                self.await_exit()
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


class WorkerPool:
    """One :class:`Worker` per planner, created on first use; :meth:`close` ends them all.

    Args:
        prefix: argv every worker runs under (compute-sanitizer's), or empty; with a prefix the
            workers also get ``PYTORCH_NO_CUDA_MEMORY_CACHING=1``.
        cuda: whether torch sees a CUDA device here (see :func:`worker_env`).
        sandbox: ``auto`` (the namespaces on the CPU, where the kernel allows them; none where
            CUDA is used, since legacy CUDA IPC handles do not cross PID namespaces), ``namespace``
            (required: a worker that cannot make them does not start) or ``none``.
        linger: seconds each worker waits at :meth:`close` for a death after its last case.
    """

    def __init__(self, prefix: list[str] | None = None, cuda: bool = False,
                 sandbox: str = "auto", linger: float = LINGER_SECONDS) -> None:
        self.prefix, self.cuda, self.linger = list(prefix or []), cuda, linger
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
                                           self.off_reason, self.linger)
        return self.workers[planner]

    def close(self) -> list[dict]:
        """End every worker (each waits out its linger first,
        :data:`conformance.robustness.worker_process.LINGER_SECONDS`); returns the deaths of
        their last cases they had not reported (each ``owner``, ``reason``, ``tail`` and
        ``planner``), found now or before a later case began."""
        self._closed = self.sandboxes()
        deaths = []
        for planner, w in self.workers.items():
            w.close()
            deaths += [{**d, "planner": planner} for d in w.take_deaths()]
        self.workers.clear()
        return deaths


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
