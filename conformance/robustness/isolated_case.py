"""One case across the process boundary of crash isolation (protocol in
:mod:`conformance.robustness.isolation_worker`).

The parent sends the case without its goldens (:func:`without_goldens`); the worker rebuilds the
inputs, runs the planner and sends back what it observed (:func:`observe_request`, an
:class:`conformance.engine.observe.Observation` as JSON); the parent, which the planner never
reaches, judges it against its own copy of the case (:func:`conformance.engine.judge.judge`). A
planner in the worker can neither patch the judge nor read or edit a golden.
"""

from __future__ import annotations

import copy
import traceback
from pathlib import Path

from conformance.corpus.loader import Case, make_case
from conformance.engine.runner import CaseBuildError, Target, observe, resolve_device
from conformance.robustness.in_process import safe_repr
from impls.registry import get_planner


def without_goldens(raw: dict) -> dict:
    """A copy of case object ``raw`` with every ``expect`` (the case's and each step's) emptied:
    what the worker needs to build the inputs, and nothing it could copy into the outputs."""
    raw = copy.deepcopy(raw)
    raw["expect"] = {}
    for step in raw.get("steps", ()):
        step["expect"] = {}
    return raw


def case_request(case: Case, planner: str, device: str) -> dict:
    """The request that runs ``case`` on ``planner`` (tensors on ``device``) in a worker."""
    return {"raw": without_goldens(case.raw), "path": str(case.path),
            "json_path": case.json_path, "planner": planner, "device": device}


def observe_request(request: dict) -> dict:
    """In the worker: run the case of ``request`` on its planner and record it.

    Returns:
        ``{"status": "observed", "observation": <Observation JSON>, "device": "cuda:0"}``;
        ``{"status": "case-error", "text": <one line>}`` when the inputs cannot be built (the
        case's fault); ``{"status": "error", "text": <traceback>}`` when the harness failed.
    """
    import torch

    device = resolve_device(request["device"])
    try:
        case = make_case(request["raw"], Path(request["path"]), request["json_path"])
        seen = observe(case, Target(request["planner"], get_planner(request["planner"]), device))
        if device.type == "cuda":
            torch.cuda.synchronize(device)
    except CaseBuildError as exc:
        return {"status": "case-error", "text": str(exc)}
    except Exception:
        return {"status": "error", "text": traceback.format_exc()}
    except BaseException as exc:  # KeyboardInterrupt, SystemExit, pytest's outcomes, a subclass
        return {"status": "error", "text": f"the planner raised {type(exc).__name__}"
                f"({', '.join(map(safe_repr, exc.args))}) during the case: a launcher returns or "
                "raises an Exception (spec section 3)"}
    return {"status": "observed", "observation": seen.to_json(), "device": str(device)}


def judge_observed(case: Case, planner: str, answer: dict) -> None:
    """In the parent: judge a worker's ``observed`` answer against the parent's own ``case``.

    Raises:
        ConformanceFailure: the planner's behaviour differs from the case (readable report),
            including an observation that does not parse (a worker that lied on its reply pipe).
    """
    from conformance.engine.runner import ConformanceFailure, Observation, judge

    try:
        seen = Observation.from_json(answer["observation"])
    except Exception as exc:  # noqa: BLE001 - anything unreadable is the worker's fault
        raise ConformanceFailure(f"{case.id}[{planner}]  ({case.location})\n  the isolation "
                                 f"worker sent an unreadable observation ({type(exc).__name__}: "
                                 f"{exc})") from None
    judge(case, seen, planner, answer["device"])
