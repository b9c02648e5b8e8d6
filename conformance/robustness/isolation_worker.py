"""The isolation worker: ``python -m conformance.robustness.isolation_worker --reply-fd N --sock-fd M
[--sandbox namespace|require|none]`` (started by :mod:`conformance.robustness.isolation`, never by
hand).

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

Stdout and stderr are the harness's log file (C code, CUDA and compute-sanitizer write there too);
replies go to file descriptor ``N`` (one JSON object per line, the harness never unpickles them).
The handshake comes on stdin: ``{"hello": {"protocol": P, "planner": NAME}}``; the worker replies
``{"ready": true, "protocol": P, "pid": ..., "sandbox": ...}`` when it speaks :data:`PROTOCOL`, else
``{"refused": "<why>"}`` and exits with status 2. Then requests come on the Unix socket ``M``
(pickled, with file descriptors: :mod:`conformance.robustness.shared_tensors`):

* ``{"begin": n, "device": D}``: a case starts (no reply); the worker prints ``MARK begin n`` to its
  stdout (:data:`MARK`, for compute-sanitizer's report) and snapshots torch's global state.
* ``{"kwargs": {...}}`` (+ fds): one call. The worker maps the tensors the harness built (inputs
  fenced: :mod:`~conformance.robustness.guard_pages`), calls the planner on them and replies
  ``{"status": "returned", "returned_none", "returned_repr"}``, ``{"status": "raised", "raised":
  <Raised fields>}`` or ``{"status": "error", "text"}`` (a BaseException that is not an Exception,
  or the planner failed to load), plus ``"versions"`` (advisory: torch's version counters of the
  tensors the planner wrote in place). After a CUDA error (an illegal address leaves the context
  unusable) it replies ``{"status": "crash"}`` and exits.
* ``{"end": n}``: the worker prints ``MARK end n`` and replies ``{"status": "ended",
  "state_changed": [...]}`` (:mod:`conformance.robustness.torch_state`, then every change a call
  of the case made to its arguments' tensor objects: :meth:`~conformance.robustness.
  shared_tensors.Receiver.altered`); it exits when state changed, so that the next case gets a
  clean process.

The worker never sees a case: no id, no file, no golden, no expected value, not the judge nor the
observer; only the tensors and integers of each call.

All die with the harness: ``PR_SET_PDEATHSIG`` (Linux, via ctypes) sends the shepherd
:data:`CLEAN_UP` (it kills its descendants) when the harness exits, and SIGKILL to the worker when
the shepherd exits (and to PID 1 when the process outside does), and a watchdog thread that owns
stdin ends the worker at EOF (the harness closed the pipe or died), even while a case hangs.
"""

from __future__ import annotations

import argparse
import faulthandler
import json
import os
import queue
import resource
import signal
import sys
import threading
import traceback

from conformance.robustness import sandbox

PROTOCOL = 4
"""Version of the protocol above; the harness refuses a worker that speaks another."""
MARK = "=== conformance-isolation"
"""Prefix of the worker's case markers in its log."""
CUDA_FATAL = ("illegal memory access", "illegal address", "CUDA error", "cudaError",
              "unspecified launch failure", "misaligned address")
"""Texts of CUDA errors after which the context is unusable: the worker reports a crash and exits."""
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


def _watch_stdin(lines: queue.Queue) -> None:
    """Own stdin: queue every line; at EOF (the harness closed the pipe or died) end the process
    at once, whatever the main thread is doing."""
    for line in sys.stdin:
        lines.put(line)
    os._exit(0)


def _marker(kind: str, number: int) -> None:
    os.write(1, f"{MARK} {kind} {number} ===\n".encode())


def _call(launch, kwargs: dict, device: str) -> dict:
    """Call the planner once; what it did, as the reply's fields."""
    from dataclasses import asdict

    import torch

    from conformance.engine.observe import Raised, returned_fields
    from conformance.robustness.in_process import safe_repr

    pid = os.getpid()
    try:
        returned = launch(**kwargs)
        if device.startswith("cuda"):
            torch.cuda.synchronize(device)
    except Exception as exc:  # the planner's answer: recorded, judged by the harness
        raised = Raised.of(exc)
        if device.startswith("cuda") and any(m in raised.message for m in CUDA_FATAL):
            return {"status": "crash", "reason": "CUDA error (context lost)",
                    "text": raised.traceback_tail}
        return {"status": "raised", "raised": asdict(raised)}
    except BaseException as exc:  # noqa: BLE001 - KeyboardInterrupt, SystemExit, pytest's outcomes
        return {"status": "error", "text": f"the planner raised {type(exc).__name__}"
                f"({', '.join(map(safe_repr, exc.args))}) during the case: a launcher returns or "
                "raises an Exception (spec section 3)"}
    finally:
        if os.getpid() != pid:  # a child the planner forked: one reply per call
            os._exit(0)
    none, text = returned_fields(returned)
    return {"status": "returned", "returned_none": none, "returned_repr": text}


def _serve(reply, sock, lines: queue.Queue, where: str) -> None:
    def send(obj: dict) -> None:
        reply.write(json.dumps(obj) + "\n")
        reply.flush()

    hello = json.loads(lines.get()).get("hello", {})
    if hello.get("protocol") != PROTOCOL:
        send({"refused": f"isolation worker speaks protocol {PROTOCOL}, the parent "
                         f"{hello.get('protocol')!r}: both must come from the same checkout"})
        os._exit(2)

    import torch  # noqa: F401 - loaded before the first case, not inside its timeout

    from conformance.robustness import torch_state
    from conformance.robustness.shared_tensors import Receiver, receive, version_bumps
    from conformance.corpus.corpus_subject import registry as _registry
    get_planner = _registry.get_planner

    send({"ready": True, "protocol": PROTOCOL, "pid": os.getpid(), "sandbox": where})
    planner, launch, receiver, device, before = hello.get("planner"), None, None, "cpu", {}
    altered: list[str] = []  # this case's changes of its arguments' tensor objects
    while True:
        message, fds = receive(sock)
        if message is None:
            os._exit(0)
        if "begin" in message:
            receiver, device, altered = Receiver(), message["device"], []
            before = torch_state.snapshot()
            _marker("begin", message["begin"])
        elif "end" in message:
            _marker("end", message["end"])
            receiver = None
            changed = torch_state.changes(before, torch_state.snapshot()) + altered
            send({"status": "ended", "state_changed": changed})
            if changed:
                sys.stdout.flush()
                os._exit(3)  # the next case gets a fresh process
        else:
            kwargs = receiver.kwargs(message, fds)
            if launch is None:
                try:
                    launch = get_planner(planner)
                except BaseException:  # noqa: BLE001 - the planner's module failed: its case
                    send({"status": "error", "text": traceback.format_exc()})
                    continue
            versions = receiver.versions()
            answer = _call(launch, kwargs, device)
            answer["versions"] = version_bumps(kwargs, versions)
            altered += [a for a in receiver.altered(message, kwargs) if a not in altered]
            send(answer)
            if answer["status"] == "crash":
                sys.stdout.flush()
                os._exit(3)


def _enter_namespaces(args, closed: tuple[int, ...]) -> str:
    """Before the shepherd forks the worker: move into new user + PID (+ mount) namespaces when
    ``args.sandbox`` asks, leaving this process outside as :func:`_outside` and a PID 1 as
    :func:`_init`; returns, in the process that goes on to be the shepherd, what the worker got
    (:data:`conformance.robustness.sandbox.NAMESPACE` or ``"none: <why>"``)."""
    if args.sandbox == "none":
        return "none: --sandbox none"
    why = sandbox.new_user_pid_namespaces()
    if why:
        if args.sandbox == "require":
            os.write(args.reply_fd, (json.dumps({"refused": f"--sandbox namespace: {why}"})
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


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m conformance.robustness.isolation_worker")
    parser.add_argument("--reply-fd", type=int, required=True)
    parser.add_argument("--sock-fd", type=int, required=True)
    parser.add_argument("--sandbox", choices=SANDBOXES, default="none")
    args = parser.parse_args()
    sandbox.die_with_parent()
    watched = set(signal.valid_signals()) - {signal.SIGKILL, signal.SIGSTOP}
    signal.pthread_sigmask(signal.SIG_BLOCK, watched)
    closed = (args.reply_fd, args.sock_fd, 0)
    where = _enter_namespaces(args, closed)
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
    if args.sandbox != "none":  # also where the namespaces were refused (never with CUDA)
        kept = sandbox.drop_capabilities()
        if kept:
            where += f" (capabilities kept: {kept})"
    # No core files: a crash is reported from the signal and the log, and dumping a process that
    # holds torch (and a CUDA context) takes seconds to minutes.
    resource.setrlimit(resource.RLIMIT_CORE, (0, resource.getrlimit(resource.RLIMIT_CORE)[1]))
    # a segfault prints the crashing thread's Python stack into the log (only that thread: the
    # watchdog's and torch's idle threads would push it out of the last lines a report keeps)
    faulthandler.enable(sys.stderr, all_threads=False)
    reply = os.fdopen(args.reply_fd, "w")
    import socket

    sock = socket.socket(fileno=args.sock_fd)
    lines: queue.Queue = queue.Queue()
    threading.Thread(target=_watch_stdin, args=(lines,), daemon=True, name="stdin-watchdog").start()
    _serve(reply, sock, lines, where)


if __name__ == "__main__":
    main()
