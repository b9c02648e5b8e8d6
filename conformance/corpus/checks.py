"""Checks of a case that its JSON Schema cannot express, run at load time so that a faulty case
fails as one ``[load]`` item naming its file and JSON path, before anything is allocated.

Every value a case hands to torch is checked here against the dtype it will have (spec section 3:
int64 per-request inputs, LUT and outputs, int32 table and scalar outputs), every size against the
limits of :mod:`conformance.corpus.limits`, every table or LUT change against the table or LUT it
changes, and every step that expects no error against the launcher's validation (spec section 4),
so that a fault of the case is never blamed on a planner.
"""

from __future__ import annotations

import torch

from conformance.corpus.arrays import ArraySpecError, evaluate, spec_len
from conformance.corpus.generators import DEFAULT_TABLE, lut_len, table_shape
from conformance.corpus.limits import (
    MAX_ARRAY_LEN,
    MAX_CASE_MEMORY,
    MAX_LUT_LEN,
    MAX_OVERRIDE_ELEMENTS,
    MAX_PERMUTED_ELEMENTS,
    MAX_TABLE_ELEMENTS,
    case_memory,
)
from conformance.corpus.corpus_subject import NAME as _NAME
from conformance.corpus.corpus_subject import constants as _constants
from conformance.corpus.corpus_subject import contract as _contract
from conformance.corpus.corpus_subject import errors as _errors

PLAN_BS_BLOCK_SIZE = _constants.PLAN_BS_BLOCK_SIZE
SCRATCH_MIN_LEN = _constants.SCRATCH_MIN_LEN
LUT_NAME = _contract.LUT_NAME
OUTPUT_NAMES = _contract.OUTPUT_NAMES
output_lengths = _contract.output_lengths
REQUEST_INPUT_NAMES = _contract.REQUEST_INPUT_NAMES
SCALAR_NAMES = _contract.SCALAR_NAMES
SCALAR_OUTPUT_NAMES = _contract.SCALAR_OUTPUT_NAMES
SWA_WINDOW_NAME = _contract.SWA_WINDOW_NAME
TABLE_NAME = _contract.TABLE_NAME
CATALOG = _errors.CATALOG
identify = _errors.identify

INT64_MIN, INT64_MAX = -(1 << 63), (1 << 63) - 1
INT32_MIN, INT32_MAX = -(1 << 31), (1 << 31) - 1
ARRAY_OUTPUTS = tuple(name for name in OUTPUT_NAMES if name not in SCALAR_OUTPUT_NAMES)
"""The three array outputs a golden lists: scratch and write offsets [bs + 1], seeds [bs]."""
Fault = tuple[str, str]
"""(JSON path relative to the case, ``$`` first; message)."""


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


def _device_error(name: str) -> str | None:
    """Why torch on this machine cannot put a tensor on device ``name``; None when it can."""
    try:
        device = torch.device(name)
    except (RuntimeError, ValueError) as exc:
        return str(exc)
    if device.type in ("cpu", "meta"):
        return None
    if device.type == "cuda":
        count = torch.cuda.device_count() if torch.cuda.is_available() else 0
        if (device.index or 0) < count:
            return None
        return f"{name!r}: this machine has {count} CUDA device{'s' * (count != 1)}"
    backend = getattr(torch, device.type, None)
    if backend is not None and getattr(backend, "is_available", lambda: False)():
        return None
    return f"{name!r}: torch sees no {device.type} device on this machine"


def _override_error(overrides: list, inputs: dict) -> Fault | None:
    """An override of a LUT the case does not have, a device this machine lacks, a shape over
    :data:`MAX_OVERRIDE_ELEMENTS`."""
    for k, override in enumerate(overrides):
        if override.get("tensor") == LUT_NAME and inputs.get("lut") is None:
            return f".overrides[{k}]", "overrides the LUT, which is null in this case"
        if "device" in override:
            fault = _device_error(override["device"])
            if fault:
                return f".overrides[{k}].device", f"device {fault}"
        shape = override.get("shape", [])
        n = _elements(shape)
        if n > MAX_OVERRIDE_ELEMENTS:
            shown = shape if len(shape) <= 8 else f"of {len(shape)} dimensions"
            count = f"{n} elements" if n <= MAX_ARRAY_LEN ** 2 else \
                f"over {MAX_ARRAY_LEN ** 2} elements"
            return (f".overrides[{k}].shape",
                    f"shape {shown} has {count}, over the limit of {MAX_OVERRIDE_ELEMENTS}")
    return None


def _elements(shape: list[int]) -> int:
    """Elements of a tensor of ``shape``, capped just past MAX_ARRAY_LEN ** 2: a long shape of
    huge sizes is never multiplied out into an integer of millions of digits."""
    n = 1
    for size in shape:
        n *= size
        if n > MAX_ARRAY_LEN ** 2:
            return MAX_ARRAY_LEN ** 2 + 1
    return n


def _outside(values, low: int, high: int) -> int | None:
    """Index of the first of ``values`` outside [low, high], or None."""
    return next((i for i, v in enumerate(values) if not low <= v <= high), None)


def _table_error(table: dict) -> Fault | None:
    """Size, raggedness, int32 values and ``set`` entries inside the table."""
    if table["generator"] == "explicit":
        widths = {len(row) for row in table["values"]}
        if len(widths) > 1:
            return ".values", f"ragged table: row lengths {sorted(widths)}"
    rows, cols = table_shape(table)
    if rows * cols > MAX_TABLE_ELEMENTS:
        return "", (f"table {rows} x {cols} = {rows * cols} elements exceeds the limit of "
                    f"{MAX_TABLE_ELEMENTS}")
    if table["generator"] == "permuted" and rows * cols > MAX_PERMUTED_ELEMENTS:
        return "", (f"permuted table {rows} x {cols} = {rows * cols} elements exceeds the limit "
                    f"of {MAX_PERMUTED_ELEMENTS} for a permutation (sorted at load time)")
    for r, row in enumerate(table.get("values", ())):
        i = _outside(row, INT32_MIN, INT32_MAX)
        if i is not None:
            return f".values[{r}][{i}]", "a table value is outside int32"
    return _table_set_error(table.get("set", ()), rows, cols, ".set")


def _table_set_error(entries: list, rows: int, cols: int, where: str) -> Fault | None:
    for k, (row, pos, value) in enumerate(entries):
        if not (0 <= row < rows and 0 <= pos < cols):
            return f"{where}[{k}]", f"[{row}, {pos}] is outside the {rows} x {cols} table"
        if not INT32_MIN <= value <= INT32_MAX:
            return f"{where}[{k}]", f"value {value} is outside int32 (the table's dtype)"
    return None


def _lut_error(lut: dict) -> Fault | None:
    """Length, int64 values (explicit, shifted, set) and ``set`` entries inside the LUT."""
    n = lut_len(lut)
    if n > MAX_LUT_LEN:
        return ".len", f"LUT length {n} exceeds the limit of {MAX_LUT_LEN}"
    if lut["generator"] == "permutation" and n > MAX_PERMUTED_ELEMENTS:
        return ".len", f"permutation LUT length {n} exceeds the limit of {MAX_PERMUTED_ELEMENTS}"
    i = _outside(lut.get("values", ()), INT64_MIN, INT64_MAX)
    if i is not None:
        return f".values[{i}]", "a LUT value is outside int64"
    shift = lut.get("shift", 0)
    if n and not (INT64_MIN <= shift and shift + n - 1 <= INT64_MAX):
        return ".shift", f"shift {shift} puts LUT values outside int64"
    return _lut_set_error(lut.get("set", ()), n, ".set")


def _lut_set_error(entries: list, n: int, where: str) -> Fault | None:
    for k, (index, value) in enumerate(entries):
        if not 0 <= index < n:
            return f"{where}[{k}]", f"index {index} is outside the LUT of length {n}"
        if not INT64_MIN <= value <= INT64_MAX:
            return f"{where}[{k}]", f"value {value} is outside int64 (the LUT's dtype)"
    return None


def size_error(inputs: dict) -> Fault | None:
    """Sizes and values of what a case's steps share, refused before anything is allocated:
    buffers over MAX_ARRAY_LEN, tables over MAX_TABLE_ELEMENTS, LUTs over MAX_LUT_LEN
    (conformance/corpus/limits.py), ragged explicit tables, values outside the dtype, ``set``
    entries outside the table / LUT, scalars outside int64."""
    for key in ("write_req_capacity", "scratch_len"):
        if inputs.get(key, 0) > MAX_ARRAY_LEN:
            return f".inputs.{key}", f"{key} {inputs[key]} exceeds the limit of {MAX_ARRAY_LEN}"
    table = inputs.get(TABLE_NAME)
    if table is not None:
        fault = _table_error(table)
        if fault:
            return f".inputs.{TABLE_NAME}" + fault[0], fault[1]
    lut = inputs.get("lut")
    if lut is not None:
        fault = _lut_error(lut)
        if fault:
            return ".inputs.lut" + fault[0], fault[1]
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
        i = _outside(values, INT64_MIN, INT64_MAX)
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
    fault = _table_set_error(inputs.get("req_to_token_set", ()), rows, cols,
                             ".inputs.req_to_token_set")
    if fault:
        return fault
    if "lut_set" in inputs:
        if shared.get("lut") is None:
            return ".inputs.lut_set", "changes the LUT, which is null in this case"
        return _lut_set_error(inputs["lut_set"], lut_len(shared["lut"]), ".inputs.lut_set")
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
            return f".expect.{name}", f"golden has {len(values)} values, bs={bs} needs {want}"
        i = _outside(values, INT64_MIN, INT64_MAX)
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
    for k, step in enumerate(steps):
        where = f"$.steps[{k}]" if "steps" in doc else "$"
        inputs = {**shared, **step.get("inputs", {})}
        expect = step["expect"]
        fault = _step_values_error(inputs, shared, "error" in expect) or _override_error(
            step.get("overrides", doc.get("overrides", [])), inputs)
        if not fault and "error" in expect:
            fault = _error_expectation_error(expect["error"])
        elif not fault and entry != "launcher":
            fault = ".expect", f"entry {entry!r} cases expect an error"
        elif not fault:
            fault = _launch_error(inputs, bss[k], capacity) or _golden_error(expect, bss[k])
        if fault:
            return where + fault[0], fault[1]
    return None
