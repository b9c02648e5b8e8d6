"""Tags whose truth a case's own data decides, checked against that data at load time.

Every tag is declared in ``cases/offsets-planner/schema.json`` (``$defs/tag``) with a line saying
what it means. For the tags in :data:`RULES` that meaning is a fact of the case's values, entry,
steps or overrides, and each rule is a necessary condition of it read off the loaded case: a case
that does what its tag says always meets it (``swa`` is read as the corpus uses it: see
:func:`_swa`). A case that carries such a tag but fails the rule
loads with a :class:`TagWarning` naming the case, the tag and what its data lacks; it still runs.
This mirrors :func:`impls.offsets_planner.harness.hazards.hazard_tag_fault`, which warns on a
``hazard`` tag that no row of spec section 6 explains (``cases/offsets-planner/README.md``,
*Tags*).

Only this direction is checked (the tag says X, the case does not do X). A case whose data does X
without the tag is not refused: several tags name what a case is written to test, not everything
its values touch (a batch of 33 has padding rows, a wrapper-error case a window).

Tags left unchecked, their meaning not decided by the data alone: ``hazard`` (its own check),
``spec-example``, ``capacity``, ``boundary``, ``int64`` (a value past int32 may be a sum or a
position the kernel computes), ``fuzz`` and ``found`` (where the case came from).
"""

from __future__ import annotations

import json
import math
import os
import re
import warnings
from typing import Callable, Iterator

from conformance.corpus.arrays import evaluate
from conformance.corpus.generators import DEFAULT_TABLE, lut_len, table_shape
from impls.offsets_planner import contract as _contract

RPI = _contract.REQUEST_INPUT_NAMES[0]
REQUEST_INPUT_NAMES = _contract.REQUEST_INPUT_NAMES
SCALAR_NAMES = _contract.SCALAR_NAMES
SWA_WINDOW_NAME = _contract.SWA_WINDOW_NAME
TABLE_NAME = _contract.TABLE_NAME
LUT_NAME = _contract.LUT_NAME
VERIFY_CAPACITY_NAME = _contract.VERIFY_CAPACITY_NAME
SEEDED = {"permuted", "permutation"}
"""Table and LUT generators driven by a splitmix64 seed (README, *Inputs*)."""


class TagWarning(UserWarning):
    """A case that carries a tag of :data:`RULES` whose rule its data does not meet."""


def _error_steps(case) -> str | None:
    if any(step.error is not None for step in case.steps):
        return None
    return "no step expects an error (spec §4)"


def _several_steps(case) -> str | None:
    if len(case.steps) > 1:
        return None
    return "it has one step (the tag means several launches over the same output buffers)"


def _zero_d(case) -> str | None:
    if any(o.get("shape") == [] for step in case.steps for o in step.overrides):
        return None
    return "no override gives a tensor the shape [] (a 0-d tensor)"


def _lut(case) -> str | None:
    return None if case.inputs.get("lut") is not None else f"its LUT ({LUT_NAME}) is null"


def _swa(case) -> str | None:
    """schema.json reads ``swa`` as swa_window_size > 0, but the corpus also carries it on the
    cases of a window switched off (W <= 0, ``semantics/window.json``) and of an SWA LUT with W 0:
    the rule asks for what every one of them has, a window other than 0 or a LUT."""
    if case.inputs.get("lut") is not None:
        return None
    if any(step.inputs.get(SWA_WINDOW_NAME, 0) != 0 for step in case.steps):
        return None
    return f"{SWA_WINDOW_NAME} is 0 in every step and its LUT is null"


def _specs(value: object) -> Iterator[dict]:
    """Every dict inside ``value`` (a case's inputs: array, table and LUT specs), depth first."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            yield item
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)


def _random(case) -> str | None:
    """A seeded random batch: a ``random`` array spec, or a splitmix64-seeded table or LUT
    (:data:`SEEDED`; ``lut-permutation-seeded`` draws its randomness from those alone)."""
    inputs = [case.inputs, *(step.inputs for step in case.steps)]
    if any("random" in spec for spec in _specs(inputs)):
        return None
    table, lut = case.inputs.get(TABLE_NAME) or DEFAULT_TABLE, case.inputs.get("lut") or {}
    if table["generator"] in SEEDED or lut.get("generator") in SEEDED:
        return None
    return ("no array spec is 'random' and neither its table nor its LUT is seeded "
            "(permuted, permutation)")


def _padding(case) -> str | None:
    if any(0 in evaluate(step.inputs.get(RPI, [])) for step in case.steps):
        return None
    return f"no step's {RPI} holds 0 (a padding row)"


def _entry(wanted: str) -> Callable[[object], str | None]:
    def rule(case) -> str | None:
        return None if case.entry == wanted else f"its entry is {case.entry!r}, not {wanted!r}"
    return rule


def _device(case) -> str | None:
    if any("device" in o for step in case.steps for o in step.overrides):
        return None
    return "no override puts a tensor on a device"


def _empty_tensors(case) -> Iterator[bool]:
    """Whether each tensor the case asks for is empty: request arrays, table, LUT, the seed and
    scratch buffers, override shapes, an allocate case's plan capacities."""
    if case.entry == "allocate":
        yield from (case.allocate.get(k) == 0 for k in ("write_req_capacity", VERIFY_CAPACITY_NAME))
        return
    rows, cols = table_shape(case.inputs.get(TABLE_NAME) or DEFAULT_TABLE)
    lut = case.inputs.get("lut")
    yield rows * cols == 0
    yield lut is not None and lut_len(lut) == 0
    yield case.write_req_capacity == 0 or case.inputs.get("scratch_len") == 0
    for step in case.steps:
        yield from (len(evaluate(step.inputs.get(name, []))) == 0 for name in REQUEST_INPUT_NAMES)
        yield from ("shape" in o and o["shape"] != [] and math.prod(o["shape"]) == 0
                    for o in step.overrides)


def _zero_size(case) -> str | None:
    if any(_empty_tensors(case)):
        return None
    return ("no tensor is empty (request arrays, table, LUT, output buffers, override shapes "
            "all have elements)")


def _integers(case) -> Iterator[int]:
    """Every integer the case hands the planner, validator or allocator: request values, table
    and LUT values (generated ones only where they can be negative), their changes, scalars,
    derived integers and allocate capacities."""
    table, lut = case.inputs.get(TABLE_NAME) or {}, case.inputs.get("lut") or {}
    for row in table.get("values", ()):
        yield from row
    yield from (value for _, _, value in table.get("set", ()))
    yield from lut.get("values", ())
    yield from (value for _, value in lut.get("set", ()))
    if lut.get("generator") == "shift" and lut["len"] > 0:
        yield lut["shift"]
    yield from (v for v in (*case.derived.values(), *case.allocate.values())
                if isinstance(v, int) and not isinstance(v, bool))
    for step in case.steps:
        for name in REQUEST_INPUT_NAMES:
            yield from evaluate(step.inputs.get(name, []))
        yield from (step.inputs.get(name, 0) for name in SCALAR_NAMES)
        yield from (value for _, _, value in step.inputs.get("req_to_token_set", ()))
        yield from (value for _, value in step.inputs.get("lut_set", ()))


def _negative(case) -> str | None:
    if any(v < 0 for v in _integers(case)):
        return None
    return "no value it hands the planner (lengths, rows, slots, scalars) is negative"


RULES: dict[str, Callable[[object], str | None]] = {
    "documented-error": _error_steps,
    "order": _error_steps,
    "steps": _several_steps,
    "zero-d": _zero_d,
    "lut": _lut,
    "swa": _swa,
    "random": _random,
    "padding": _padding,
    "validator": _entry("validator"),
    "allocation": _entry("allocate"),
    "device": _device,
    "zero-size": _zero_size,
    "negative": _negative,
}
"""Tag -> rule: the rule takes a loaded :class:`conformance.corpus.case_model.Case` (its ``entry``,
``inputs``, ``steps``, ``derived``, ``allocate``) and returns None when the case's data bears the
tag out, else what the data lacks (one clause)."""


def lacking(case) -> list[tuple[str, str]]:
    """(tag, what the data lacks) for each tag of ``case`` in :data:`RULES` whose rule fails, in
    the case's tag order.

    Raises:
        ArraySpecError: an array spec that cannot be evaluated (the loader checks them first).
    """
    return [(tag, lack) for tag in case.tags if tag in RULES
            for lack in (RULES[tag](case),) if lack is not None]


def case_line(case) -> int:
    """The line of ``case``'s file that holds its ``"id"`` (the first such line), or 1 where the
    file cannot be read again or holds no such line. Read only when a warning is due."""
    try:
        with open(case.path, encoding="utf-8", errors="replace") as file:
            text = file.read()
    except OSError:
        return 1
    found = re.search(r'"id"\s*:\s*' + re.escape(json.dumps(case.id)), text)
    return text.count("\n", 0, found.start()) + 1 if found else 1


def warn_at(case, warning: Warning) -> None:
    """Issue ``warning`` located at ``case`` (its file, absolute, and :func:`case_line`) rather
    than at the harness line that found it: pytest's warnings summary then heads it with the case
    file and line and quotes that line (the case's ``"id"``)."""
    warnings.warn_explicit(warning, type(warning), filename=os.path.abspath(case.path),
                           lineno=case_line(case))


def tag_fault(case) -> tuple[str, str] | None:
    """None: the tags of :data:`RULES` never refuse a case. Warns (:class:`TagWarning`) once for
    each tag of ``case`` whose rule its data fails (:func:`lacking`), located at the case's file
    and line (:func:`warn_at`) and naming its JSON path in a group file, its id, the tag and what
    the data lacks. The loader calls it beside
    :func:`impls.offsets_planner.harness.hazards.hazard_tag_fault`, which has the same shape."""
    where = "" if case.json_path == "$" else f"{case.json_path}: "
    for tag, lack in lacking(case):
        warn_at(case, TagWarning(f"{where}case {case.id!r} is tagged {tag!r}, but {lack}"))
    return None
