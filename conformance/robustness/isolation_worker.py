"""The isolation worker: ``python -m conformance.robustness.isolation_worker --reply-fd N --sock-fd M
[--sandbox namespace|require|none]`` (started by :mod:`conformance.robustness.isolation`, never by
hand).

The process the harness starts becomes the worker's family first
(:func:`conformance.robustness.shepherd.fork_worker`): a *shepherd* that forks the worker at once
and then only waits for it, so that a planner that signals "its parent" reaches the shepherd,
never the harness; with ``--sandbox namespace`` (:mod:`conformance.robustness.sandbox`) the
shepherd and the worker run in new user, PID and mount namespaces, and the worker drops every
capability unless ``--sandbox none``. :mod:`conformance.robustness.shepherd` says how each
process of the family lives and dies; this module is the worker's side of the protocol.

Stdout and stderr are the harness's log file (C code, CUDA and compute-sanitizer write there too);
replies go to file descriptor ``N`` (one JSON object per line, the harness never unpickles them).
The handshake comes on stdin: ``{"hello": {"protocol": P, "planner": NAME}}``; the worker replies
``{"ready": true, "protocol": P, "pid": ..., "sandbox": ...}`` when it speaks :data:`PROTOCOL`, else
``{"refused": "<why>"}`` and exits with status 2. Then requests come on the Unix socket ``M``
(pickled, with file descriptors: :mod:`conformance.robustness.worker_socket`; the tensors:
:mod:`conformance.robustness.shared_tensors`):

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
  shared_receiver.Receiver.altered`); it exits when state changed, so that the next case gets a
  clean process.

Before its first case the worker imports the libraries an honest planner uses
(:func:`conformance.robustness.first_import.warm_up`); what the planner module's own first
import adds (a variable, an ``atexit`` handler) is a change of its first case, named as the
import's. On a GPU it then compiles and launches one kernel of each framework
(:func:`conformance.robustness.first_use.exercise`): what a framework's first compile does in a
process (a native compiler loaded, its signal handlers installed) is its own, done before the
harness's first reading.

The worker never sees a case: no id, no file, no golden, no expected value, not the judge nor the
observer; only the tensors and integers of each call.

All die with the harness: ``PR_SET_PDEATHSIG`` (Linux, via ctypes) sends the shepherd
:data:`~conformance.robustness.shepherd.CLEAN_UP` (it kills its descendants) when the harness
exits, and SIGKILL to the worker when the shepherd exits (and to PID 1 when the process outside
does), and a watchdog thread that owns stdin ends the worker at EOF (the harness closed the pipe
or died), even while a case hangs.
"""

from __future__ import annotations

import argparse
import faulthandler
import json
import os
import queue
import resource
import sys
import threading
import traceback

from conformance.robustness.shepherd import SANDBOXES, fork_worker

PROTOCOL = 4
"""Version of the protocol above; the harness refuses a worker that speaks another."""
MARK = "=== conformance-isolation"
"""Prefix of the worker's case markers in its log."""
CUDA_FATAL = ("illegal memory access", "illegal address", "CUDA error", "cudaError",
              "unspecified launch failure", "misaligned address")
"""Texts of CUDA errors after which the context is unusable: the worker reports a crash and exits."""


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

    from conformance.robustness.first_import import import_changes, warm_up
    warm_up()  # the planners' libraries import before any reading: their additions are theirs
    from conformance.robustness.first_use import exercise
    exercise()  # and compile and launch a kernel each (GPU): what their first use does is theirs

    from conformance.robustness import torch_state
    from conformance.robustness.import_state import (C_ENVIRON, ENVIRON, c_environ, environ,
                                                     with_import_additions)
    from conformance.robustness.runtime_state import import_settings
    from conformance.robustness.runtime_state import with_import_additions as runtime_additions
    from conformance.robustness.shared_receiver import Receiver, version_bumps
    from conformance.robustness.worker_socket import receive
    from conformance.corpus.corpus_subject import registry as _registry
    get_planner = _registry.get_planner

    send({"ready": True, "protocol": PROTOCOL, "pid": os.getpid(), "sandbox": where})
    planner, launch, receiver, device, before = hello.get("planner"), None, None, "cpu", {}
    altered: list[str] = []  # this case's changes of its arguments' tensor objects
    imported: list[str] = []  # what the planner module's first import added (first_import.py)
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
            changed = imported + torch_state.changes(before, torch_state.snapshot()) + altered
            imported = []
            send({"status": "ended", "state_changed": changed})
            if changed:
                sys.stdout.flush()
                os._exit(3)  # the next case gets a fresh process
        else:
            kwargs = receiver.kwargs(message, fds)
            if launch is None:
                imported_from, settings_from = environ(), import_settings()
                c_from = c_environ()
                try:
                    launch = get_planner(planner)
                except BaseException:  # noqa: BLE001 - the planner's module failed: its case
                    send({"status": "error", "text": traceback.format_exc()})
                    continue
                # what its first import added is a change of this case, named as the import's;
                # taken into the starting state so that the end's reading does not repeat it
                imported = import_changes(imported_from, environ(), c_from, c_environ(),
                                          settings_from, import_settings())
                if isinstance(before.get(ENVIRON), tuple):
                    before[ENVIRON] = with_import_additions(before[ENVIRON], imported_from,
                                                            environ())
                if isinstance(before.get(C_ENVIRON), tuple):
                    before[C_ENVIRON] = with_import_additions(before[C_ENVIRON], c_from,
                                                              c_environ())
                before = runtime_additions(before, settings_from, import_settings())
            versions = receiver.versions()
            answer = _call(launch, kwargs, device)
            answer["versions"] = version_bumps(kwargs, versions)
            altered += [a for a in receiver.altered(message, kwargs) if a not in altered]
            send(answer)
            if answer["status"] == "crash":
                sys.stdout.flush()
                os._exit(3)


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m conformance.robustness.isolation_worker")
    parser.add_argument("--reply-fd", type=int, required=True)
    parser.add_argument("--sock-fd", type=int, required=True)
    parser.add_argument("--sandbox", choices=SANDBOXES, default="none")
    args = parser.parse_args()
    where = fork_worker(args.sandbox, args.reply_fd, args.sock_fd)  # from here on: the worker
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
