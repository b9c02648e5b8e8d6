"""The isolation worker's process family (:mod:`conformance.robustness.isolation_worker`): the
shepherd the harness starts, which forks the worker and then only waits for it, and, in a
sandbox, the process left outside the namespaces and the namespaces' PID 1.

Two processes, four in a sandbox. The one the harness starts is the *shepherd*: it forks the worker
at once, before importing anything, and then only waits for it. The planner runs in the worker,
whose parent (``os.getppid()``) is the shepherd, so a planner that signals "its parent" reaches the
shepherd, never the harness. The shepherd blocks every catchable signal and never takes one but
SIGCHLD: a signal sent to it stays pending, a SIGSTOP stops it, a SIGKILL kills it, and each of
these is already visible in ``/proc/<shepherd>/status`` when the planner's ``kill()`` returns, so
the harness, which looks there after every reply (:meth:`conformance.robustness.isolation.Worker.
tampered`), fails that case without a race. When the worker dies the shepherd dies the same way
(same signal or exit code). Both run in their own session (``start_new_session``): ``os.kill(0,
...)`` and ``os.killpg`` from the planner reach only them, and the harness kills the whole group.
The shepherd is non-dumpable (the worker, same uid, cannot ptrace it nor open its
``/proc/<pid>/mem``) and a child subreaper: an orphan the planner leaves (a ``setsid`` +
double-fork daemon) becomes the shepherd's child, and is SIGKILLed when the worker ends.

With ``--sandbox namespace`` (:mod:`conformance.robustness.sandbox`) the process the harness started
moves into a new user namespace and stays outside a new PID namespace, waiting; its child is PID 1
there, with a private mount namespace and a fresh ``/proc``, and forks the shepherd, which forks the
worker. The worker, whose capabilities are dropped, sees only the namespace's processes: not
pytest, so it can signal it by no pid; and when the worker ends, the shepherd, then PID 1, end, and
the kernel kills whatever is left in the namespace. Where the namespaces cannot be made the
shepherd forks the worker as above, and the handshake says why (``"sandbox": "none: <why>"``);
``--sandbox require`` refuses instead. Unless ``--sandbox none`` the worker drops every capability
either way: root without the namespaces then cannot ptrace the non-dumpable judge either.

All die with the harness: ``PR_SET_PDEATHSIG`` (Linux, via ctypes) sends the shepherd
:data:`CLEAN_UP` (it kills its descendants) when the harness exits, and SIGKILL to the worker when
the shepherd exits (and to PID 1 when the process outside does).

It imports only the standard library and :mod:`conformance.robustness.sandbox`: the family is
made before the worker imports torch or the planner.
"""

from __future__ import annotations

import json
import os
import resource
import signal

from conformance.robustness import sandbox

CLEAN_UP = signal.SIGRTMIN + 3
"""The signal that makes the shepherd kill every descendant and exit: the harness sends it before
killing a worker, and it is the shepherd's parent-death signal."""
SANDBOXES = ("namespace", "require", "none")
"""``--sandbox``: try the namespaces (fall back to none, saying why), insist on them (refuse to
start without them), or do not try."""


def _shepherd(worker: int) -> None:
    """The shepherd's whole life (see the module docstring); never returns. Every other signal
    stays blocked and pending, for the harness to see. It reaps the orphans it adopted (a child
    subreaper) as they die; when the worker ends, or :data:`CLEAN_UP` comes (the harness is
    killing the worker, or the harness died: the shepherd's parent-death signal), it SIGKILLs
    every descendant left -- a ``setsid`` + double-fork daemon included -- then ends as the
    worker did."""
    while True:
        got = signal.sigwaitinfo({signal.SIGCHLD, CLEAN_UP})
        if got.si_signo == CLEAN_UP:
            sandbox.kill_children()
            os._exit(1)
        while True:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                break
            if pid == 0:
                break
            if pid == worker:
                sandbox.kill_children()
                _exit_like(status)


def _init(shepherd: int, status_fd: int) -> None:
    """PID 1 of the worker's namespace: reap whatever dies, and when the shepherd ends pass its
    wait status to the process outside (``status_fd``) and exit, which makes the kernel SIGKILL
    every process left in the namespace. Never returns."""
    status = sandbox.reap_until(shepherd)
    os.write(status_fd, f"{status}\n".encode())
    os._exit(0)


def _outside(init: int, status_fd: int) -> None:
    """The process the harness started, outside the namespace: wait for its PID 1 and end as the
    shepherd inside did (its wait status comes on ``status_fd``). Never returns."""
    while True:
        signal.sigwaitinfo({signal.SIGCHLD})
        pid, status = os.waitpid(init, os.WNOHANG)
        if pid == init:
            text = os.read(status_fd, 64).decode().strip()
            _exit_like(int(text) if text.isdigit() else status)


def _exit_like(status: int) -> None:
    """End this process as a child ended (wait ``status``): same exit code, or killed by the
    same signal."""
    code = os.waitstatus_to_exitcode(status)
    if code >= 0:
        os._exit(code)
    resource.setrlimit(resource.RLIMIT_CORE, (0, resource.getrlimit(resource.RLIMIT_CORE)[1]))
    if -code not in (signal.SIGKILL, signal.SIGSTOP):  # those two have no handler nor mask
        signal.signal(-code, signal.SIG_DFL)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {-code})
    os.kill(os.getpid(), -code)
    os._exit(128 - code)


def _enter_namespaces(mode: str, reply_fd: int, closed: tuple[int, ...]) -> str:
    """Before the shepherd forks the worker: move into new user + PID (+ mount) namespaces when
    ``mode`` (one of :data:`SANDBOXES`) asks, leaving this process outside as :func:`_outside`
    and a PID 1 as :func:`_init`; returns, in the process that goes on to be the shepherd, what
    the worker got (:data:`conformance.robustness.sandbox.NAMESPACE` or ``"none: <why>"``).
    With ``require`` and no namespaces it writes ``{"refused": ...}`` to ``reply_fd`` and exits
    with status 2."""
    if mode == "none":
        return "none: --sandbox none"
    why = sandbox.new_user_pid_namespaces()
    if why:
        if mode == "require":
            os.write(reply_fd, (json.dumps({"refused": f"--sandbox namespace: {why}"})
                                + "\n").encode())
            os._exit(2)
        return f"none: {why}"
    sandbox.non_dumpable()  # now, before the fork: the process left outside is the judge's too
    status_read, status_write = os.pipe()
    init = os.fork()
    if init:
        for fd in (*closed, status_write):
            os.close(fd)
        _outside(init, status_read)
    os.close(status_read)
    sandbox.die_with_parent()  # SIGKILL, forced: the sender is outside the namespace
    why = sandbox.private_proc()
    kept_writable = sandbox.read_only(sandbox.protected_paths()) if why is None else why
    shepherd = os.fork()
    if shepherd:
        for fd in closed:
            os.close(fd)
        _init(shepherd, status_write)
    os.close(status_write)
    sandbox.die_with_parent()
    return (sandbox.NAMESPACE + (f" (/proc not private: {why})" if why else "")
            + (f" (harness files writable: {kept_writable})" if kept_writable else ""))


def fork_worker(mode: str, reply_fd: int, sock_fd: int) -> str:
    """Become the process family above, ``mode`` (one of :data:`SANDBOXES`) deciding the
    namespaces; returns only in the worker, with what sandbox it got (the handshake's
    ``"sandbox"``). Every other process of the family closes ``reply_fd``, ``sock_fd`` and stdin
    and never returns."""
    sandbox.die_with_parent()
    watched = set(signal.valid_signals()) - {signal.SIGKILL, signal.SIGSTOP}
    signal.pthread_sigmask(signal.SIG_BLOCK, watched)
    closed = (reply_fd, sock_fd, 0)
    where = _enter_namespaces(mode, reply_fd, closed)
    # after the uid map is written: a non-dumpable process's /proc files belong to root
    undumpable = sandbox.non_dumpable()
    if undumpable:
        where += f" (shepherd dumpable: {undumpable})"
    sandbox.child_subreaper()
    shepherd = os.getpid()
    worker = os.fork()
    if worker:
        for fd in closed:
            os.close(fd)
        sandbox.die_with_parent(CLEAN_UP)
        _shepherd(worker)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, watched)
    if not sandbox.die_with_parent() and os.getppid() != shepherd:
        os._exit(1)  # the shepherd died before the worker could follow it
    if mode != "none":  # also where the namespaces were refused (never with CUDA)
        kept = sandbox.drop_capabilities()
        if kept:
            where += f" (capabilities kept: {kept})"
    return where
