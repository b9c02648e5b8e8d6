"""Proof, from a differing value, that a planner read or wrote outside a tensor (spec section 6,
last line: never a project rule, always a contract failure).

Each proof is certain rather than likely:
* a write outside an output tensor (into its guard zones);
* a value that is the fill of the guard zone around ``req_to_token`` or the LUT
  (:data:`conformance.engine.inputs.TABLE_GUARD_GARBAGE`): it was read from there.

A seed that no table or LUT element holds is *not* proof: arithmetic on a seed read inside the
table (an off-by-one) gives such values too, and that is a value bug, not a read outside.

A write into the hidden guards that an engine maps before and after an argument's memory
(:attr:`conformance.engine.observe.StepObservation.past_end`) is proof too: :func:`guard_writes`.
A read outside an input is no difference here: the isolated engine faults it where a page allows
(a ``crash``, :mod:`conformance.robustness.guard_pages`); within the page it shares with the
input, and in an in-process run, the guard zone's fill reaching an output is the proof.
"""

from __future__ import annotations

from collections import Counter

from conformance.engine.inputs import TABLE_GUARD_GARBAGE
from conformance.engine.verdict import Difference, rule_line


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


def guard_writes(k: int, run: str, records: list[dict], rule) -> tuple[list[Difference], list[str]]:
    """Step ``k`` of ``run``'s writes into the hidden guards (``records``: one dict per element,
    ``field``, ``index``, ``past``, ``expected``, ``got``), each an ``outside`` difference decided
    by ``rule`` (the contract), and the report's lines for them: one per field, its first write,
    then the rule and the spec's words (spec section 6: never read or write outside a tensor)."""
    differences, firsts = [], {}
    for w in records:
        field = str(w["field"])
        evidence = (f"the planner wrote outside {field} ({_beyond(w)}, into memory the "
                    f"harness mapped {'after' if w['past'] > 0 else 'before'} its allocation)")
        differences.append(Difference(k, run, "outside", field, w["index"], w["expected"],
                                      w["got"], rule, evidence))
        firsts.setdefault(field, w)
    lines = []
    for field, w in firsts.items():
        mine = [x for x in records if x["field"] == field]
        where = "past the end of" if all(x["past"] > 0 for x in mine) else "outside"
        lines.append(f"{field}: wrote {len(mine)} element(s) {where} its allocation, the first "
                     f"{_beyond(w)} (got {w['got']} where the hidden guard held {w['expected']})")
    if firsts:
        lines.append("  " + rule_line(Counter({rule: len(records)})))
        lines.append("    spec §6: no implementation may ever read or write outside a tensor")
    return differences, lines


def _beyond(w: dict) -> str:
    """Where a hidden-guard record lies: ``N past its end`` or ``N before its start``."""
    return f"{w['past']} past its end" if w["past"] > 0 else f"{-w['index']} before its start"
