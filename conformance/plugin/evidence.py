"""Evidence, in a failure report, that a planner read or wrote outside a tensor (spec section 6,
last line: never a project rule, always a contract failure).

Three kinds, each certain rather than likely:
* a differing value that is the fill of the guard zone around ``req_to_token`` or the LUT
  (:data:`conformance.engine.inputs.TABLE_GUARD_GARBAGE`): it was read from there;
* a seed that no table or LUT element holds and that is not -1: every seed of spec section 5 is
  one of those, so it came from memory outside both;
* a write the diff places outside an output tensor (its guard zones).
"""

from __future__ import annotations

import re

from conformance.engine.inputs import TABLE_GUARD_GARBAGE, build_tables
from conformance.corpus.section6 import ERROR
from impls.constants import NO_SEED
from impls.contract import ARGUMENTS

GUARD_FILLS = frozenset(TABLE_GUARD_GARBAGE.values())
SEEDS_FIELD = next(a.name for a in ARGUMENTS
                   if a.role == "output" and a.length == "[write_req_capacity]")
"""The seeds output (``[write_req_capacity]``, spec section 3), as a failure report names it."""
_FIELD = re.compile(r"^\s*(\w+): \d+ element\(s\) differ", re.MULTILINE)
_GOT = re.compile(r"^\s*got\b(.*)$", re.MULTILINE)
_MARKED = re.compile(r"\[(-?\d+)\]")


def marked_values(text: str) -> list[int]:
    """The differing "got" values of a diff in a failure report (bracketed cells)."""
    return [int(v) for line in _GOT.findall(text or "") for v in _MARKED.findall(line)]


def possible_seeds(case) -> set[int]:
    """Every value a seed of ``case`` may take under spec section 5: -1, any table element, any
    LUT element, including those its steps set (a superset: enough to prove a value impossible)."""
    table, lut = build_tables(case, "cpu")
    values = {NO_SEED, *table.flatten().tolist()}
    if lut is not None:
        values |= set(lut.tolist())
    for step in case.steps:
        values |= {v for _, _, v in step.inputs.get("req_to_token_set", ())}
        values |= {v for _, v in step.inputs.get("lut_set", ())}
    return values


ERROR_VERDICTS = ("wrong error", "expected ")
"""How the judge's report of an error mismatch starts (conformance/engine/judge.py)."""


def differing_fields(text: str) -> list[str]:
    """The outputs a failure report ``text`` names as differing, in its order."""
    return _FIELD.findall(text or "")


def rule_explains(text: str, governs: frozenset[str]) -> bool:
    """Whether the failure report ``text`` lies entirely where a project rule or the wrapper
    decides (``governs``: outputs, or ``error``; :func:`conformance.corpus.section6.governed`). A
    report about anything else (another output, an input written, a raise on a valid step) is a
    failure of the contract, whatever the case pins."""
    fields = differing_fields(text)
    if fields:
        return set(fields) <= governs
    detail = next((ln.strip() for ln in (text or "").splitlines()[2:]
                   if ln.strip() and not ln.strip().startswith(("run ", "step "))), "")
    return ERROR in governs and detail.startswith(ERROR_VERDICTS)


def outside_evidence(text: str, case=None) -> str | None:
    """Why the failure report ``text`` (of ``case``, when given) shows an access outside a
    tensor, or None."""
    got = marked_values(text)
    for value in got:
        if value in GUARD_FILLS:
            return (f"value {value} ({value:#x}) is the fill of the guard zone around "
                    f"req_to_token / the LUT: the planner read outside a tensor")
    if "(outside the tensor:" in (text or ""):
        return "the planner wrote outside an output tensor"
    fields = _FIELD.findall(text or "")
    if case is not None and fields and fields[0] == SEEDS_FIELD and got:
        try:
            possible = possible_seeds(case)
        except Exception:  # a case that cannot be built says so elsewhere
            return None
        stray = [v for v in got if v not in possible]
        if stray:
            return (f"seed {stray[0]} is neither -1 nor any element of the table or LUT: it was "
                    f"read from outside them")
    return None
