"""The isolation worker: ``python -m conformance.robustness.isolation_worker --reply-fd N`` (started by
:mod:`conformance.robustness.isolation`, never by hand).

Its stdout and stderr are the parent's log file (C code, CUDA and compute-sanitizer write there too);
replies go to file descriptor ``N``; requests come on stdin, one JSON object per line:

1. Handshake: the parent sends ``{"hello": {"protocol": P}}``; the worker replies
   ``{"ready": true, "protocol": P, "pid": ...}`` when it speaks protocol :data:`PROTOCOL`, else
   ``{"refused": "<why>"}`` and exits with status 2.
2. Cases: ``{"case": n, "raw", "path", "json_path", "planner", "device"}``, ``raw`` without its
   goldens. The worker prints ``MARK begin n`` and ``MARK end n`` (:data:`MARK`) to its stdout
   around the case, so that a tool writing into the same log (compute-sanitizer) can be tied to
   it; rebuilds the inputs, runs the planner and replies with what it observed
   (:func:`conformance.robustness.isolated_case.observe_request`) plus ``"state_changed": [...]``,
   the process-global torch state the case changed (:mod:`conformance.robustness.torch_state`);
   the worker then exits, so that the next case gets a clean
   process. After a CUDA error (an illegal address leaves the context unusable) it replies
   ``{"status": "crash", ...}`` and exits. A segfault or a hang is seen by the parent (EOF with a
   signal, or no reply in time).

The worker dies with its parent: ``PR_SET_PDEATHSIG`` (Linux, via ctypes) sends it SIGKILL when the
parent exits, and a watchdog thread that owns stdin ends the process at EOF (the parent closed the
pipe or died), even while a case hangs.
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

PROTOCOL = 2
"""Version of the line protocol above; the parent refuses a worker that speaks another."""
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


def _watch_stdin(lines: queue.Queue) -> None:
    """Own stdin: queue every line; at EOF (the parent closed the pipe or died) end the process at
    once, whatever the main thread is doing."""
    for line in sys.stdin:
        lines.put(line)
    os._exit(0)


def _marker(kind: str, number: int) -> None:
    os.write(1, f"{MARK} {kind} {number} ===\n".encode())


def _serve(reply, lines: queue.Queue) -> None:
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
    from conformance.robustness.isolated_case import observe_request

    send({"ready": True, "protocol": PROTOCOL, "pid": os.getpid()})
    while True:
        request = json.loads(lines.get())
        number = request["case"]
        print(f"{MARK} case {number}: {request['raw'].get('id')}[{request['planner']}] ===",
              flush=True)
        before = torch_state.snapshot()
        _marker("begin", number)
        try:
            answer = observe_request(request)
        except BaseException:  # noqa: BLE001 - KeyboardInterrupt, SystemExit: the case's error
            answer = {"status": "error", "text": traceback.format_exc()}
        _marker("end", number)
        answer["state_changed"] = torch_state.changes(before, torch_state.snapshot())
        text = answer.get("text") or ""
        if request["device"].startswith("cuda") and any(m in text for m in CUDA_FATAL):
            answer.update(status="crash", reason="CUDA error (context lost)")
        send(answer)
        if answer["status"] == "crash" or answer["state_changed"]:
            sys.stdout.flush()
            os._exit(3)  # the next case gets a fresh process


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m conformance.robustness.isolation_worker")
    parser.add_argument("--reply-fd", type=int, required=True)
    args = parser.parse_args()
    die_with_parent()
    # No core files: a crash is reported from the signal and the log, and dumping a process that
    # holds torch (and a CUDA context) takes seconds to minutes.
    resource.setrlimit(resource.RLIMIT_CORE, (0, resource.getrlimit(resource.RLIMIT_CORE)[1]))
    faulthandler.enable(sys.stderr)  # a segfault prints the Python stack into the log
    reply = os.fdopen(args.reply_fd, "w")
    lines: queue.Queue = queue.Queue()
    threading.Thread(target=_watch_stdin, args=(lines,), daemon=True, name="stdin-watchdog").start()
    _serve(reply, lines)


if __name__ == "__main__":
    main()
