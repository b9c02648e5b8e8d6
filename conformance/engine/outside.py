"""Proof, from a differing value, that a planner read or wrote outside a tensor (spec section 6,
last line: never a project rule, always a contract failure).

Each proof is certain rather than likely:
* a write outside an output tensor (into its guard zones);
* a value that is the fill of the guard zone around ``req_to_token`` or the LUT
  (:data:`conformance.engine.inputs.TABLE_GUARD_GARBAGE`): it was read from there;
* a seed that no table or LUT element holds and that is not -1: every seed of spec section 5 is
  one of those, so it came from memory outside both.
"""

from __future__ import annotations

from conformance.engine.inputs import TABLE_GUARD_GARBAGE, build_tables
from impls.constants import NO_SEED
from impls.contract import ARGUMENTS

SEEDS_FIELD = next(a.name for a in ARGUMENTS
                   if a.role == "output" and a.length == "[write_req_capacity]")
"""The seeds output (``[write_req_capacity]``, spec section 3)."""


def guard_fills() -> frozenset[int]:
    """The values the guard zones around the table and the LUT hold in this process."""
    return frozenset(TABLE_GUARD_GARBAGE.values())


def possible_seeds(case) -> frozenset[int]:
    """Every value a seed of ``case`` may take under spec section 5: -1, any table element, any
    LUT element, including those its steps set (a superset: enough to prove a value impossible)."""
    table, lut = build_tables(case, "cpu")
    values = {NO_SEED, *table.flatten().tolist()}
    if lut is not None:
        values |= set(lut.tolist())
    for step in case.steps:
        values |= {v for _, _, v in step.inputs.get("req_to_token_set", ())}
        values |= {v for _, v in step.inputs.get("lut_set", ())}
    return frozenset(values)


def outside_proof(seeds, name: str, index: int, length: int, got) -> str | None:
    """Why output ``name``'s element ``index`` (of ``length``) holding ``got`` proves an access
    outside a tensor, or None. ``seeds()`` gives :func:`possible_seeds` of the case (called only
    for a differing seed)."""
    if index < 0 or index >= length:
        side = f"{-index} before its start" if index < 0 else f"{index - length + 1} past its end"
        return f"the planner wrote outside {name} ({side})"
    if isinstance(got, int) and got in guard_fills():
        return (f"{name}[{index}] = {got} ({got:#x}) is the fill of the guard zone around "
                f"req_to_token / the LUT: the planner read outside a tensor")
    if name == SEEDS_FIELD and isinstance(got, int):
        try:
            possible = seeds()
        except Exception:  # noqa: BLE001 - a case that cannot be built says so elsewhere
            return None
        if got not in possible:
            return (f"seed {got} ({name}[{index}]) is neither -1 nor any element of the table or "
                    f"LUT: it was read from outside them")
    return None
