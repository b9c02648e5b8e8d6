"""Checks of a case that its JSON Schema cannot express, run at load time so that a faulty case
fails as one ``[load]`` item naming its file and JSON path, before anything is allocated.

Every value a case hands to torch is checked here against the dtype it will have (spec section 3:
int64 per-request inputs, LUT and outputs, int32 table and scalar outputs), every size against the
limits of :mod:`conformance.corpus.limits`, every table or LUT change against the table or LUT it
changes, and every step that expects no error against the launcher's validation (spec section 4)
and for overrides (only a step that expects an error may have them: a golden and its element
rules are read from the inputs before overrides), so that a fault of the case is never blamed on a
planner. The buffers, table and LUT a case's steps share, and a step's table or LUT changes, are
checked by :mod:`conformance.corpus.size_checks`; a step's overrides by
:mod:`conformance.corpus.override_checks`.
"""

from __future__ import annotations

from conformance.corpus.arrays import ArraySpecError, evaluate, spec_len
from conformance.corpus.generators import DEFAULT_TABLE, lut_len, table_shape
from conformance.corpus.limits import MAX_ARRAY_LEN, MAX_CASE_MEMORY, case_memory
from conformance.corpus.corpus_subject import NAME as _NAME
from conformance.corpus.corpus_subject import constants as _constants
from conformance.corpus.corpus_subject import contract as _contract
from conformance.corpus.corpus_subject import errors as _errors
from conformance.corpus.override_checks import golden_override_error, override_error
from conformance.corpus.text import counted
from conformance.corpus.size_checks import (
    INT32_MAX,
    INT32_MIN,
    INT64_MAX,
    INT64_MIN,
    Fault,
    first_outside,
    lut_set_error,
    size_error,
    table_set_error,
)

PLAN_BS_BLOCK_SIZE = _constants.PLAN_BS_BLOCK_SIZE
SCRATCH_MIN_LEN = _constants.SCRATCH_MIN_LEN
OUTPUT_NAMES = _contract.OUTPUT_NAMES
output_lengths = _contract.output_lengths
REQUEST_INPUT_NAMES = _contract.REQUEST_INPUT_NAMES
SCALAR_NAMES = _contract.SCALAR_NAMES
SCALAR_OUTPUT_NAMES = _contract.SCALAR_OUTPUT_NAMES
SWA_WINDOW_NAME = _contract.SWA_WINDOW_NAME
TABLE_NAME = _contract.TABLE_NAME
CATALOG = _errors.CATALOG
identify = _errors.identify

ARRAY_OUTPUTS = tuple(name for name in OUTPUT_NAMES if name not in SCALAR_OUTPUT_NAMES)
"""The three array outputs a golden lists: scratch and write offsets [bs + 1], seeds [bs]."""


def _entry_error(doc: dict, entry: str) -> Fault | None:
    """``derived`` belongs to validator cases and ``allocate`` to allocate cases only."""
    if "derived" in doc and entry != "validator":
        return "$.derived", f"'derived' is only read by validator cases, this one is {entry!r}"
    if "allocate" in doc and entry != "allocate":
        return "$.allocate", f"'allocate' is only read by allocate cases, this one is {entry!r}"
    if entry == "allocate" and "allocate" not in doc:
        return "$", "an allocate case needs 'allocate'"
    if entry == "allocate" and doc["allocate"]["write_req_capacity"] > MAX_ARRAY_LEN:
        return ("$.allocate.write_req_capacity", f"write_req_capacity exceeds the limit of "
                                                 f"{MAX_ARRAY_LEN}")
    return None


def _step_values_error(inputs: dict, shared: dict, expects_error: bool) -> Fault | None:
    """Per-step values: request arrays (evaluable, int64, one length unless the step expects an
    error), scalars within int64, table and LUT changes inside what they change."""
    lengths = {}
    for name in REQUEST_INPUT_NAMES:
        try:
            values = evaluate(inputs.get(name, []))
        except ArraySpecError as exc:
            return f".inputs.{name}", f"bad array spec: {exc}"
        i = first_outside(values, INT64_MIN, INT64_MAX)
        if i is not None:
            return f".inputs.{name}", f"element {i} is outside int64"
        lengths[name] = len(values)
    if len(set(lengths.values())) > 1 and not expects_error:
        return ".inputs", "request arrays of different lengths: " + ", ".join(
            f"{name} {n}" for name, n in lengths.items()) + " (only a length error expects that)"
    for name in SCALAR_NAMES:
        if not INT64_MIN <= inputs.get(name, 0) <= INT64_MAX:
            return f".inputs.{name}", f"{name} {inputs[name]} is outside int64"
    table = shared.get(TABLE_NAME)
    rows, cols = table_shape(table if table is not None else DEFAULT_TABLE)
    fault = table_set_error(inputs.get("req_to_token_set", ()), rows, cols,
                             ".inputs.req_to_token_set")
    if fault:
        return fault
    if "lut_set" in inputs:
        if shared.get("lut") is None:
            return ".inputs.lut_set", "changes the LUT, which is null in this case"
        return lut_set_error(inputs["lut_set"], lut_len(shared["lut"]), ".inputs.lut_set")
    return None


def _memory_error(shared: dict, capacity: int, steps: int) -> Fault | None:
    """A case whose estimated run (:func:`conformance.corpus.limits.case_memory`, from its buffer
    lengths, table and LUT sizes and step count) needs more than MAX_CASE_MEMORY."""
    outputs = sum(output_lengths(capacity, shared.get("scratch_len", SCRATCH_MIN_LEN)).values())
    table = shared.get(TABLE_NAME) or DEFAULT_TABLE
    rows, cols = table_shape(table)
    lut = shared.get("lut")
    need = case_memory(outputs, steps, rows * cols, 0 if lut is None else lut_len(lut))
    if need <= MAX_CASE_MEMORY:
        return None
    return "$", (f"a run of this case needs about {need / 2**30:.1f} GiB ({steps} step(s) x "
                 f"{outputs} output elements, a {rows} x {cols} table), over the limit of "
                 f"{MAX_CASE_MEMORY / 2**30:.0f} GiB per case: use fewer steps or smaller "
                 f"buffers (cases/{_NAME}/README.md, Limits)")


def _launch_error(inputs: dict, bs: int, capacity: int) -> Fault | None:
    """A step that expects no error but whose launch fails the validation of spec section 4."""
    if bs > PLAN_BS_BLOCK_SIZE:
        return ".inputs", (f"bs {bs} exceeds {PLAN_BS_BLOCK_SIZE}: the launcher refuses it "
                           f"(spec §4 item 3)")
    if bs > capacity:
        return ".inputs", (f"bs {bs} exceeds write_req_capacity {capacity}: the launcher refuses "
                           f"it (spec §4 item 14); expect that error or raise the capacity")
    if inputs.get("scratch_len", SCRATCH_MIN_LEN) < SCRATCH_MIN_LEN:
        return ".inputs.scratch_len", (f"scratch_len below {SCRATCH_MIN_LEN}: the launcher refuses "
                                       f"it (spec §4 item 12)")
    lut = inputs.get("lut")
    if lut is not None and lut_len(lut) == 0:
        return ".inputs.lut", "a LUT of length 0: the launcher refuses it (spec §4 item 10)"
    if lut is None and inputs.get(SWA_WINDOW_NAME, 0) > 0:
        return ".inputs.lut", (f"{SWA_WINDOW_NAME} > 0 needs a LUT: the launcher refuses it "
                               "(spec §4 item 0)")
    return None


def _error_expectation_error(err: dict) -> Fault | None:
    if err["id"] not in CATALOG:
        return ".expect.error.id", f"unknown catalog id {err['id']!r}"
    found = identify(err["message"].replace("{device}", "cpu"))
    if found != err["id"]:
        return (".expect.error.message",
                f"message does not match the template of {err['id']!r} "
                f"({CATALOG[err['id']].template!r}); it matches {found!r}")
    return None


def _golden_error(expect: dict, bs: int) -> Fault | None:
    """Golden lengths (spec section 5's defined regions) and values within their dtype."""
    for name, want in zip(ARRAY_OUTPUTS, (bs + 1, bs + 1, bs)):
        try:
            values = evaluate(expect[name])
        except ArraySpecError as exc:
            return f".expect.{name}", f"bad array spec: {exc}"
        if len(values) != want:
            return f".expect.{name}", (f"golden has {counted(len(values), 'value')}, bs={bs} "
                                       f"needs {want}")
        i = first_outside(values, INT64_MIN, INT64_MAX)
        if i is not None:
            return f".expect.{name}", f"element {i} is outside int64"
    for name in SCALAR_OUTPUT_NAMES:
        if not INT32_MIN <= expect[name] <= INT32_MAX:
            return f".expect.{name}", f"{expect[name]} is outside int32 (the output's dtype)"
    return None


def _bs(inputs: dict) -> int:
    """bs of a step, 0 when its spec cannot be read (the step's own check then names the fault)."""
    try:
        return spec_len(inputs.get(REQUEST_INPUT_NAMES[0], []))
    except ArraySpecError:
        return 0


def semantic_error(doc: dict) -> Fault | None:
    """Checks the schema cannot express (``doc`` has passed the schema): sizes and values of the
    inputs, every step's values and expectation, catalog ids and messages, golden lengths."""
    steps = doc.get("steps") or [{"expect": doc["expect"], "inputs": {}}]
    entry = doc.get("entry", "launcher")
    if entry == "launcher" and "inputs" not in doc:
        return "$", "a launcher case needs 'inputs'"
    misplaced = _entry_error(doc, entry)
    if misplaced:
        return misplaced
    shared = doc.get("inputs", {})
    size = size_error(shared)  # steps cannot change the table, LUT or buffers
    if size:
        return "$" + size[0], size[1]
    bss = [_bs({**shared, **step.get("inputs", {})}) for step in steps]
    capacity = shared.get("write_req_capacity", max(bss))
    memory = _memory_error(shared, capacity, len(steps)) if entry == "launcher" else None
    if memory:
        return memory
    if "steps" in doc and doc.get("overrides"):
        return "$.overrides", ("a case with steps never applies overrides beside them: give the "
                               "step that expects the error its own ($.steps[k].overrides)")
    for k, step in enumerate(steps):
        where = f"$.steps[{k}]" if "steps" in doc else "$"
        inputs = {**shared, **step.get("inputs", {})}
        expect = step["expect"]
        overrides = step.get("overrides", []) if "steps" in doc else doc.get("overrides", [])
        fault = _step_values_error(inputs, shared, "error" in expect) or override_error(
            overrides, inputs)
        if not fault and "error" in expect:
            fault = _error_expectation_error(expect["error"])
        elif not fault and entry != "launcher":
            fault = ".expect", f"entry {entry!r} cases expect an error"
        elif not fault:
            fault = (golden_override_error(doc["id"], k if "steps" in doc else None, overrides)
                     or _launch_error(inputs, bss[k], capacity) or _golden_error(expect, bss[k]))
        if fault:
            return where + fault[0], fault[1]
    return None
