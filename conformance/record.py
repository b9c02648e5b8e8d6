"""Record goldens from the pure-Python planner (``python -m conformance record``).

The goldens themselves come from :func:`conformance.engine.reference.record_expectations`, which
builds every step with the runner's step builder. A recorded golden is a convenience, not evidence:
it came from the code under test. Check it by hand against the spec, or let ``tests/test_goldens.py``
check it against the independent oracle, and say which in the case's ``golden_check``.
"""

from __future__ import annotations

import json

from conformance.corpus.jsonfmt import dumps
from conformance.corpus.case_model import Case
from conformance.engine.reference import record_expectations

__all__ = ["UNCHECKED", "record_expectations", "write_expectations"]

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
    raw = doc
    if "cases" in doc:
        raw = next(c for c in doc["cases"] if c.get("id") == case.id)
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
