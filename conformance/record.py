"""Record goldens from the pure-Python planner (``python -m conformance record``).

A recorded golden is a convenience, not evidence: it came from the code under test. Check it by
hand against the spec, or let ``tests/test_goldens.py`` check it against the independent oracle,
and say which in the case's ``golden_check``.
"""

from __future__ import annotations

import json

from conformance.corpus.loader import Case
from conformance.engine.inputs import allocate_outputs, apply_overrides, build_tables, launcher_kwargs
from conformance.corpus.jsonfmt import dumps
from conformance.engine.runner import resolve_device
from impls import python_planner

UNCHECKED = ("recorded by `python -m conformance record` from the python planner; "
             "NOT yet checked against the spec")


def record_expectations(case: Case) -> list[dict]:
    """The golden of every step of a launcher ``case``, from the pure-Python planner on the CPU.

    Returns:
        One expectation per step: the six output fields over their defined regions (spec
        section 5), or ``{"error": ...}`` when the step raises a documented error.
    """
    device = resolve_device("cpu")
    table, lut = build_tables(case, device)
    buffers = allocate_outputs(case, device)
    for buffer in buffers.values():
        buffer.poison("a")
    out = []
    for step in case.steps:
        kwargs = apply_overrides(launcher_kwargs(step, device, table, lut, buffers),
                                 step.overrides)
        try:
            python_planner.launch(**kwargs)
        except ValueError as exc:
            out.append({"error": {"type": "ValueError", "id": getattr(exc, "error_id", "?"),
                                  "message": str(exc)}})
            continue
        bs = step.bs
        views = {name: b.view for name, b in buffers.items()}
        out.append({
            "out_verify_offsets_scratch": views["out_verify_offsets_scratch"][: bs + 1].tolist(),
            "out_write_offsets": views["out_write_offsets"][: bs + 1].tolist(),
            "out_write_seed_slot_indices": views["out_write_seed_slot_indices"][:bs].tolist(),
            "out_verify_num_valid": int(views["out_verify_num_valid"][0]),
            "out_verify_enable": int(views["out_verify_enable"][0]),
            "out_write_num_valid_reqs": int(views["out_write_num_valid_reqs"][0]),
        })
    return out


def write_expectations(case: Case, expectations: list[dict]) -> None:
    """Store ``expectations`` in ``case``'s file (in place, case files' usual layout)."""
    doc = json.loads(case.path.read_text())
    raw = doc
    if "cases" in doc:
        raw = next(c for c in doc["cases"] if c.get("id") == case.id)
    if "steps" in raw:
        for step, expect in zip(raw["steps"], expectations):
            step["expect"] = expect
    else:
        raw["expect"] = expectations[0]
    if "golden_check" not in raw and "golden_check" not in doc.get("defaults", {}):
        raw["golden_check"] = UNCHECKED
    case.path.write_text(dumps(doc) + "\n")
