"""Proof, from a differing value, that a planner read or wrote outside a tensor (spec section 6,
last line: never a project rule, always a contract failure).

Each proof is certain rather than likely:
* a write outside an output tensor (into its guard zones);
* a value that is the fill of the guard zone around ``req_to_token`` or the LUT
  (:data:`conformance.engine.inputs.TABLE_GUARD_GARBAGE`): it was read from there.

A seed that no table or LUT element holds is *not* proof: arithmetic on a seed read inside the
table (an off-by-one) gives such values too, and that is a value bug, not a read outside.
"""

from __future__ import annotations

from conformance.engine.inputs import TABLE_GUARD_GARBAGE


def guard_fills() -> frozenset[int]:
    """The values the guard zones around the table and the LUT hold in this process."""
    return frozenset(TABLE_GUARD_GARBAGE.values())


def outside_proof(name: str, index: int, length: int, got) -> str | None:
    """Why output ``name``'s element ``index`` (of ``length``) holding ``got`` proves an access
    outside a tensor, or None."""
    if index < 0 or index >= length:
        side = f"{-index} before its start" if index < 0 else f"{index - length + 1} past its end"
        return f"the planner wrote outside {name} ({side})"
    if isinstance(got, int) and got in guard_fills():
        return (f"{name}[{index}] = {got} ({got:#x}) is the fill of the guard zone around "
                f"req_to_token / the LUT: the planner read outside a tensor")
    return None
