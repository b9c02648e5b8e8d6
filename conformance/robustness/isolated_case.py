"""What the isolation worker does with one case request (see
:mod:`conformance.robustness.isolation_worker` for the protocol): rebuild the case from its raw
JSON, run it on the planner and report the outcome as plain data."""

from __future__ import annotations

import traceback
from pathlib import Path

from conformance.corpus.loader import make_case
from conformance.engine.runner import ConformanceFailure, Target, resolve_device, run_case
from impls.registry import get_planner


def run_request(request: dict) -> dict:
    """Run the case of ``request`` (``raw``, ``path``, ``json_path``, ``planner``, ``device``).

    Returns:
        ``{"status": "passed"}``, ``{"status": "failed", "text": <ConformanceFailure text>}`` or
        ``{"status": "error", "text": <traceback>}``.
    """
    import torch

    device = resolve_device(request["device"])
    try:
        case = make_case(request["raw"], Path(request["path"]), request["json_path"])
        run_case(case, Target(request["planner"], get_planner(request["planner"]), device))
        if device.type == "cuda":
            torch.cuda.synchronize(device)
    except ConformanceFailure as exc:
        return {"status": "failed", "text": str(exc)}
    except Exception:
        return {"status": "error", "text": traceback.format_exc()}
    return {"status": "passed"}
