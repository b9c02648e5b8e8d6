"""The isolation worker: ``python -m conformance.robustness.isolation_worker LOG`` (started by
:mod:`conformance.robustness.isolation`, never by hand).

Protocol: one JSON object per line. On start the worker moves its own stdout and stderr (file
descriptors 1 and 2, so C code and CUDA's messages too) into ``LOG``, keeps a private copy of the
original stdout as the reply channel, imports torch and the harness, and replies ``{"ready": true}``.
Then for each request line ``{"raw", "path", "json_path", "planner", "device"}`` it rebuilds the
case (:func:`conformance.corpus.loader.make_case`), runs it with :func:`conformance.engine.runner.run_case` and
replies ``{"status": "passed"}``, ``{"status": "failed", "text": <ConformanceFailure text>}`` or
``{"status": "error", "text": <traceback>}``. After a CUDA error (an illegal address leaves the
context unusable) it replies ``{"status": "crash", ...}`` and exits, so the next case gets a fresh
process. A segfault or a hang is seen by the parent (EOF with a signal, or no reply in time).
"""

from __future__ import annotations

import faulthandler
import json
import os
import resource
import sys
import traceback

CUDA_FATAL = ("illegal memory access", "illegal address", "CUDA error", "cudaError",
              "unspecified launch failure", "misaligned address")
"""Texts of CUDA errors after which the context is unusable: the worker reports a crash and exits."""


def _serve(reply) -> None:
    from pathlib import Path

    import torch

    from conformance.corpus.loader import make_case
    from conformance.engine.runner import ConformanceFailure, Target, resolve_device, run_case
    from impls.registry import get_planner

    def send(obj: dict) -> None:
        reply.write(json.dumps(obj) + "\n")
        reply.flush()

    send({"ready": True, "pid": os.getpid()})
    for line in sys.stdin:
        request = json.loads(line)
        print(f"=== {request['raw']['id']}[{request['planner']}] ===", flush=True)
        device = resolve_device(request["device"])
        try:
            case = make_case(request["raw"], Path(request["path"]), request["json_path"])
            run_case(case, Target(request["planner"], get_planner(request["planner"]), device))
            if device.type == "cuda":
                torch.cuda.synchronize(device)
            answer = {"status": "passed"}
        except ConformanceFailure as exc:
            answer = {"status": "failed", "text": str(exc)}
        except Exception:
            answer = {"status": "error", "text": traceback.format_exc()}
        text = answer.get("text", "")
        if device.type == "cuda" and any(marker in text for marker in CUDA_FATAL):
            send({"status": "crash", "text": text, "reason": "CUDA error (context lost)"})
            sys.stdout.flush()
            os._exit(3)
        send(answer)


def main() -> None:
    # No core files: a crash is reported from the signal and the log, and dumping a process that
    # holds torch (and a CUDA context) takes seconds to minutes.
    resource.setrlimit(resource.RLIMIT_CORE, (0, resource.getrlimit(resource.RLIMIT_CORE)[1]))
    log = open(sys.argv[1], "ab", buffering=0)  # noqa: SIM115 (lives as long as the process)
    reply = os.fdopen(os.dup(1), "w")
    sys.stdout.flush()
    sys.stderr.flush()
    os.dup2(log.fileno(), 1)
    os.dup2(log.fileno(), 2)
    sys.stdout = os.fdopen(1, "w", buffering=1)
    sys.stderr = os.fdopen(2, "w", buffering=1)
    faulthandler.enable(sys.stderr)  # a segfault prints the Python stack into the log
    _serve(reply)


if __name__ == "__main__":
    main()
