"""The isolation worker: ``python -m conformance.robustness.isolation_worker --reply-fd N --sock-fd M``
(started by :mod:`conformance.robustness.isolation`, never by hand).

Two processes. The one the harness starts is the *shepherd*: it forks the worker at once, before
importing anything, and then only waits for it. The planner runs in the worker, whose parent
(``os.getppid()``) is the shepherd, so a planner that signals "its parent" reaches the shepherd,
never the harness. The shepherd blocks every catchable signal and never takes one but SIGCHLD: a
signal sent to it stays pending, a SIGSTOP stops it, a SIGKILL kills it, and each of these is
already visible in ``/proc/<shepherd>/status`` when the planner's ``kill()`` returns, so the
harness, which looks there after every reply (:meth:`conformance.robustness.isolation.Worker.
tampered`), fails that case without a race. When the worker dies the shepherd dies the same way
(same signal or exit code). Both run in their own session (``start_new_session``):
``os.kill(0, ...)`` and ``os.killpg`` from the planner reach only them, and the harness kills the
whole group.

Stdout and stderr are the harness's log file (C code, CUDA and compute-sanitizer write there too);
replies go to file descriptor ``N`` (one JSON object per line, the harness never unpickles them).
The handshake comes on stdin: ``{"hello": {"protocol": P, "planner": NAME}}``; the worker replies
``{"ready": true, "protocol": P, "pid": ...}`` when it speaks :data:`PROTOCOL`, else
``{"refused": "<why>"}`` and exits with status 2. Then requests come on the Unix socket ``M``
(pickled, with file descriptors: :mod:`conformance.robustness.shared_tensors`):

* ``{"begin": n, "device": D}``: a case starts (no reply); the worker prints ``MARK begin n`` to its
  stdout (:data:`MARK`, for compute-sanitizer's report) and snapshots torch's global state.
* ``{"kwargs": {...}}`` (+ fds): one call. The worker maps the tensors the harness built, calls the
  planner on them and replies ``{"status": "returned", "returned_none", "returned_repr"}``,
  ``{"status": "raised", "raised": <Raised fields>}`` or ``{"status": "error", "text"}`` (a
  BaseException that is not an Exception, or the planner failed to load), plus ``"versions"``
  (advisory: torch's version counters of the tensors the planner wrote in place). After a CUDA
  error (an illegal address leaves the context unusable) it replies ``{"status": "crash"}`` and
  exits.
* ``{"end": n}``: the worker prints ``MARK end n`` and replies ``{"status": "ended",
  "state_changed": [...]}`` (:mod:`conformance.robustness.torch_state`); it exits when state
  changed, so that the next case gets a clean process.

The worker never sees a case: no id, no file, no golden, no expected value, not the judge nor the
observer; only the tensors and integers of each call.

Both die with the harness: ``PR_SET_PDEATHSIG`` (Linux, via ctypes) sends SIGKILL to the shepherd
when the harness exits and to the worker when the shepherd does, and a watchdog thread that owns
stdin ends the worker at EOF (the harness closed the pipe or died), even while a case hangs.
"""

from __future__ import annotations

import argparse
import ctypes
import faulthandler
import json
import os
import queue
import resource
import signal
import sys
import threading
import traceback

PROTOCOL = 3
"""Version of the protocol above; the harness refuses a worker that speaks another."""
MARK = "=== conformance-isolation"
"""Prefix of the worker's case markers in its log."""
CUDA_FATAL = ("illegal memory access", "illegal address", "CUDA error", "cudaError",
              "unspecified launch failure", "misaligned address")
"""Texts of CUDA errors after which the context is unusable: the worker reports a crash and exits."""
PR_SET_PDEATHSIG = 1  # linux/prctl.h


def die_with_parent() -> bool:
    """Ask Linux to SIGKILL this process when its parent exits (``prctl(PR_SET_PDEATHSIG)``).
    Returns False where that is not available (not Linux, no libc); the stdin watchdog remains."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        ok = libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False
    return ok and os.getppid() != 1  # the parent may have died before prctl


def _shepherd(worker: int) -> None:
    """The shepherd's whole life (see the module docstring); never returns. Every other signal
    stays blocked and pending, for the harness to see."""
    while True:
        signal.sigwaitinfo({signal.SIGCHLD})
        pid, status = os.waitpid(worker, os.WNOHANG)
        if pid == worker:
            _exit_like(status)


def _exit_like(status: int) -> None:
    """End the shepherd as the worker ended: same exit code, or killed by the same signal."""
    code = os.waitstatus_to_exitcode(status)
    if code >= 0:
        os._exit(code)
    resource.setrlimit(resource.RLIMIT_CORE, (0, resource.getrlimit(resource.RLIMIT_CORE)[1]))
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


def _serve(reply, sock, lines: queue.Queue) -> None:
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
    from impls.registry import get_planner

    send({"ready": True, "protocol": PROTOCOL, "pid": os.getpid()})
    planner, launch, receiver, device, before = hello.get("planner"), None, None, "cpu", {}
    while True:
        message, fds = receive(sock)
        if message is None:
            os._exit(0)
        if "begin" in message:
            receiver, device = Receiver(), message["device"]
            before = torch_state.snapshot()
            _marker("begin", message["begin"])
        elif "end" in message:
            _marker("end", message["end"])
            receiver = None
            changed = torch_state.changes(before, torch_state.snapshot())
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
            send(answer)
            if answer["status"] == "crash":
                sys.stdout.flush()
                os._exit(3)


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m conformance.robustness.isolation_worker")
    parser.add_argument("--reply-fd", type=int, required=True)
    parser.add_argument("--sock-fd", type=int, required=True)
    args = parser.parse_args()
    die_with_parent()
    shepherd = os.getpid()
    watched = set(signal.valid_signals()) - {signal.SIGKILL, signal.SIGSTOP}
    signal.pthread_sigmask(signal.SIG_BLOCK, watched)
    worker = os.fork()
    if worker:
        for fd in (args.reply_fd, args.sock_fd, 0):
            os.close(fd)
        _shepherd(worker)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, watched)
    if not die_with_parent() and os.getppid() != shepherd:
        os._exit(1)  # the shepherd died before the worker could follow it
    # No core files: a crash is reported from the signal and the log, and dumping a process that
    # holds torch (and a CUDA context) takes seconds to minutes.
    resource.setrlimit(resource.RLIMIT_CORE, (0, resource.getrlimit(resource.RLIMIT_CORE)[1]))
    faulthandler.enable(sys.stderr)  # a segfault prints the Python stack into the log
    reply = os.fdopen(args.reply_fd, "w")
    import socket

    sock = socket.socket(fileno=args.sock_fd)
    lines: queue.Queue = queue.Queue()
    threading.Thread(target=_watch_stdin, args=(lines,), daemon=True, name="stdin-watchdog").start()
    _serve(reply, sock, lines)


if __name__ == "__main__":
    main()
