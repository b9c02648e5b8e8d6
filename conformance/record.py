"""Record goldens from the pure-Python planner (``python -m conformance record``).

The goldens themselves come from :func:`conformance.engine.reference.record_expectations`, which
builds every step with the runner's step builder. A recorded golden is a convenience, not evidence:
it came from the code under test. Check it by hand against the spec, or let ``tests/test_goldens.py``
check it against the independent oracle, and say which in the case's ``golden_check``.

A case whose only faults are its goldens (a new case written without ``expect``, or a golden of
the wrong length) is recorded too: :func:`load_without_goldens` loads it with a stand-in
expectation (:data:`STAND_IN`, a documented error: a step that expects an error reads no golden,
spec section 4) and every other load check, since recording never reads a case's goldens.
"""

from __future__ import annotations

import copy
import dataclasses
import json
import tempfile
from pathlib import Path

from conformance.corpus.case_file import CaseFileError
from conformance.corpus.case_model import Case
from conformance.corpus.jsonfmt import dumps
from conformance.corpus.loader import load_file
from conformance.engine.reference import record_expectations

__all__ = ["STAND_IN", "UNCHECKED", "golden_fault", "load_without_goldens",
           "record_expectations", "write_expectations"]

UNCHECKED = ("recorded by `python -m conformance record` from the python planner; "
             "NOT yet checked against the spec")


def write_expectations(case: Case, expectations: list[dict]) -> bool:
    """Store ``expectations`` in ``case``'s file (in place, case files' usual layout).

    A golden that changes is no longer what anyone checked: the case's ``golden_check`` becomes
    :data:`UNCHECKED` (any earlier note described the old golden) and ``needs_review`` is set
    (``cases/<subject>/schema.json``), until a person checks it and drops both. When every
    stored golden already equals ``expectations``, the file is left as it is (its review still
    holds).

    Returns:
        True when the file was written, False when it already held these goldens.
    """
    doc = json.loads(case.path.read_text())
    raw = _raw_case(doc, case.id)
    stored = [step.get("expect") for step in raw["steps"]] if "steps" in raw else [raw.get("expect")]
    if stored == expectations:
        return False
    if "steps" in raw:
        for step, expect in zip(raw["steps"], expectations):
            step["expect"] = expect
    else:
        raw["expect"] = expectations[0]
    raw["golden_check"] = UNCHECKED
    raw["needs_review"] = True
    case.path.write_text(dumps(doc) + "\n")
    return True


STAND_IN = {"error": {"type": "ValueError", "id": "contiguous",
                      "message": "kv-canary: prefix_lens must be contiguous"}}
"""The expectation a case is loaded with while its goldens are recorded: any documented error."""


def golden_fault(fault: CaseFileError) -> bool:
    """Whether ``fault`` is about a case's goldens only (a missing ``expect``, or a fault at or
    under an ``expect``), which recording replaces."""
    return fault.message == "'expect' is a required property" or ".expect" in fault.json_path


def load_without_goldens(fault: CaseFileError) -> tuple[Case | None, list[CaseFileError]]:
    """(the case of ``fault``, loaded from a copy of its file with :data:`STAND_IN` for its
    goldens, None when it still fails; the faults of that load). The case's ``path`` is its own
    file's, for :func:`write_expectations`."""
    doc = json.loads(fault.path.read_text(encoding="utf-8"))
    raw = _raw_case(doc, fault.case_id)
    for step in raw["steps"] if isinstance(raw.get("steps"), list) else [raw]:
        if isinstance(step, dict):
            step["expect"] = copy.deepcopy(STAND_IN)
    with tempfile.TemporaryDirectory(prefix="conformance-record-") as folder:
        stand_in = Path(folder) / fault.path.name
        stand_in.write_text(json.dumps(doc), encoding="utf-8")
        cases, faults = load_file(stand_in)
    faults = [dataclasses.replace(f, path=fault.path) for f in faults
              if f.case_id == fault.case_id]
    case = next((c for c in cases if c.id == fault.case_id), None)
    if case is None or faults:
        return None, faults
    return dataclasses.replace(case, path=fault.path), []


def _raw_case(doc, case_id: str) -> dict:
    """The case ``case_id`` as written in a case file's ``doc`` (one case, or a group's)."""
    if isinstance(doc, dict) and "cases" in doc:
        return next(c for c in doc["cases"] if isinstance(c, dict) and c.get("id") == case_id)
    return doc
