"""Greedy shrinking of a failing plan (a launcher case dict) with named steps.

``shrink(raw, fails)`` repeats the steps below until none makes progress (or a budget of attempts
is spent); a candidate is kept when ``fails(candidate)`` is still true and it is strictly simpler by
:func:`complexity`. Every step keeps the plan valid under spec section 4 (bs never grows past the
write capacity, a LUT stays whenever W > 0, LUT length stays >= 1, ``set`` entries stay inside the
table / LUT), so the survivor is a valid case whose golden the pure-Python planner can record.

Steps, in order: ``drop requests`` (halves, quarters, ... single requests), ``zero the window``,
``drop the LUT``, ``simplify the LUT`` (identity, no ``set``, half length), ``shrink the table``
(linear, no ``set``, half the rows, half the columns), ``default capacities``, ``halve lengths``
(every prefix / extend at once), ``zero values`` (each rpi / prefix / extend to 0 or 1, or halved).
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterator

from conformance.corpus.corpus_subject import contract as _contract

REQUEST_INPUT_NAMES = _contract.REQUEST_INPUT_NAMES
SCALAR_NAMES = _contract.SCALAR_NAMES
TABLE_NAME = _contract.TABLE_NAME

ARRAYS = REQUEST_INPUT_NAMES
"""The per-request arrays of a case's inputs (same names as the launcher's,
cases/<subject>/README.md)."""
RPI, PREFIX, EXTEND = REQUEST_INPUT_NAMES
WINDOW, CAPACITY = SCALAR_NAMES


def complexity(raw: dict) -> tuple:
    """Order of simplicity: fewer requests, fewer active ones, smaller values, smaller tables..."""
    inp = raw["inputs"]
    rpi = inp[RPI]
    table, lut = inp[TABLE_NAME], inp.get("lut")
    values = sum(abs(v) for name in ARRAYS for v in inp[name]) + abs(inp.get(WINDOW, 0))
    return (
        len(rpi),
        sum(1 for r in rpi if r != 0),
        values,
        0 if lut is None else
        1 + lut["len"] + len(lut.get("set", ())) + (lut["generator"] != "identity"),
        table["max_reqs"] * table["max_seq_len"] + len(table.get("set", ()))
        + (table["generator"] != "linear"),
        (CAPACITY in inp) + ("write_req_capacity" in inp),
    )


def _with(raw: dict, changes: dict) -> dict:
    """A deep copy of case dict ``raw`` with ``changes`` merged into its inputs."""
    out = copy.deepcopy(raw)
    out["inputs"].update(changes)
    return out


def _drop_requests(raw: dict) -> Iterator[dict]:
    inp = raw["inputs"]
    bs = len(inp[RPI])
    size = bs // 2 or 1
    while size >= 1 and bs:
        for start in range(0, bs, size):
            yield _with(raw, {name: inp[name][:start] + inp[name][start + size:]
                              for name in ARRAYS})
        if size == 1:
            break
        size //= 2


def _window(raw: dict) -> Iterator[dict]:
    if raw["inputs"].get(WINDOW, 0) != 0:
        yield _with(raw, {WINDOW: 0})


def _drop_lut(raw: dict) -> Iterator[dict]:
    inp = raw["inputs"]
    if inp.get("lut") is not None and inp.get(WINDOW, 0) <= 0:
        yield _with(raw, {"lut": None})


def _simplify_lut(raw: dict) -> Iterator[dict]:
    lut = raw["inputs"].get("lut")
    if lut is None:
        return
    if lut["generator"] != "identity":
        yield _with(raw, {"lut": {"generator": "identity", "len": lut["len"],
                                  **({"set": lut["set"]} if "set" in lut else {})}})
    if "set" in lut:
        yield _with(raw, {"lut": {k: v for k, v in lut.items() if k != "set"}})
    if lut["len"] > 1:
        n = lut["len"] // 2
        small = {**lut, "len": n}
        if "set" in lut:
            small["set"] = [s for s in lut["set"] if s[0] < n]
        yield _with(raw, {"lut": small})


def _shrink_table(raw: dict) -> Iterator[dict]:
    table = raw["inputs"][TABLE_NAME]
    if table["generator"] != "linear":
        yield _with(raw, {TABLE_NAME: {k: v for k, v in table.items() if k not in ("seed", "prng")}
                          | {"generator": "linear"}})
    for k in range(len(table.get("set", ()))):
        rest = table["set"][:k] + table["set"][k + 1:]
        yield _with(raw, {TABLE_NAME: {**table, "set": rest} if rest else
                          {key: v for key, v in table.items() if key != "set"}})
    for axis in ("max_reqs", "max_seq_len"):
        if table[axis] > 1:
            small = {**table, axis: table[axis] // 2}
            if "set" in table:
                small["set"] = [s for s in table["set"]
                                if s[0] < small["max_reqs"] and s[1] < small["max_seq_len"]]
            yield _with(raw, {TABLE_NAME: small})


def _capacities(raw: dict) -> Iterator[dict]:
    for key in (CAPACITY, "write_req_capacity"):
        if key in raw["inputs"]:
            out = copy.deepcopy(raw)
            del out["inputs"][key]
            yield out


def _halve(raw: dict) -> Iterator[dict]:
    for name in (PREFIX, EXTEND):
        yield _with(raw, {name: [v // 2 if v > 0 else -(-v // 2) for v in raw["inputs"][name]]})


def _zero_values(raw: dict) -> Iterator[dict]:
    inp = raw["inputs"]
    for name in ARRAYS:
        for i, v in enumerate(inp[name]):
            for smaller in dict.fromkeys((0, 1, v // 2 if v > 0 else -(-v // 2))):
                if abs(smaller) < abs(v):
                    yield _with(raw, {name: inp[name][:i] + [smaller] + inp[name][i + 1:]})


STEPS: tuple[tuple[str, Callable[[dict], Iterator[dict]]], ...] = (
    ("drop requests", _drop_requests),
    ("zero the window", _window),
    ("drop the LUT", _drop_lut),
    ("simplify the LUT", _simplify_lut),
    ("shrink the table", _shrink_table),
    ("default capacities", _capacities),
    ("halve lengths", _halve),
    ("zero values", _zero_values),
)


def shrink(raw: dict, fails: Callable[[dict], bool], budget: int = 3000) -> tuple[dict, list[str]]:
    """The simplest variant of ``raw`` found for which ``fails`` still holds.

    Args:
        raw: a launcher case dict whose plan fails (``fails(raw)`` is true); not modified.
        fails: the predicate, e.g. "this planner diverges from the pure-Python planner".
        budget: most calls of ``fails``.

    Returns:
        (the shrunk case dict, the names of the steps that made progress, in order).
    """
    current, applied, calls = copy.deepcopy(raw), [], 0
    progress = True
    while progress and calls < budget:
        progress = False
        for name, step in STEPS:
            for candidate in step(current):
                if calls >= budget:
                    break
                if complexity(candidate) >= complexity(current):
                    continue
                calls += 1
                if fails(candidate):
                    current, progress = candidate, True
                    applied.append(name)
                    break  # restart from the first step: earlier steps may apply again
            if progress:
                break
    return current, applied
