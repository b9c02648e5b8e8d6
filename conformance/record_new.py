"""Load a case whose only faults are its goldens, so that ``python -m conformance record`` can
write them: a new case written without ``expect``, or with a golden of the wrong length.

:func:`load_without_goldens` reads the case's file, gives the case (or each of its steps) a
stand-in expectation (:data:`STAND_IN`, a documented error: a step that expects an error reads no
golden, spec section 4), loads that copy from a temporary folder with the loader's every other
check, and hands back the case with its own file's path, for
:func:`conformance.record.write_expectations`. The goldens are then recorded from the pure-Python
planner (:func:`conformance.engine.reference.record_expectations`, which never reads a case's
goldens) and marked unchecked, as any recorded golden.
"""

from __future__ import annotations

import copy
import dataclasses
import json
import tempfile
from pathlib import Path

from conformance.corpus.case_file import CaseFileError
from conformance.corpus.case_model import Case
from conformance.corpus.loader import load_file

STAND_IN = {"error": {"type": "ValueError", "id": "contiguous",
                      "message": "kv-canary: prefix_lens must be contiguous"}}
"""The expectation a case is loaded with while its goldens are recorded: any documented error."""


def golden_fault(fault: CaseFileError) -> bool:
    """Whether ``fault`` is about a case's goldens only (a missing ``expect``, or a fault at or
    under an ``expect``), which recording replaces."""
    return (fault.message == "'expect' is a required property"
            or ".expect" in fault.json_path.replace("[", ".["))


def load_without_goldens(fault: CaseFileError) -> tuple[Case | None, list[CaseFileError]]:
    """(the case of ``fault``, loaded with :data:`STAND_IN` for its goldens, None when it still
    fails; the faults of that load). The case's ``path`` is its own file's."""
    doc = json.loads(fault.path.read_text(encoding="utf-8"))
    entries = doc["cases"] if isinstance(doc, dict) and "cases" in doc else [doc]
    for raw in entries:
        if isinstance(raw, dict) and raw.get("id") == fault.case_id:
            if isinstance(raw.get("steps"), list):
                for step in raw["steps"]:
                    if isinstance(step, dict):
                        step["expect"] = copy.deepcopy(STAND_IN)
            else:
                raw["expect"] = copy.deepcopy(STAND_IN)
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
