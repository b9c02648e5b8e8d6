"""Load-time checks of what a case's steps share -- its buffers, its KV table and its LUT -- and of
a step's changes to the table or LUT: every size against the limits of
:mod:`conformance.corpus.limits`, every value against the dtype torch will give it (spec section 3:
an int32 table, an int64 LUT).

Each check returns a :data:`Fault` (a JSON path relative to what it checked, and a message) or
None; :mod:`conformance.corpus.checks` puts the case's own path in front.
"""

from __future__ import annotations

from conformance.corpus.corpus_subject import contract as _contract
from conformance.corpus.generators import lut_len, table_shape
from conformance.corpus.limits import (
    MAX_ARRAY_LEN,
    MAX_LUT_LEN,
    MAX_PERMUTED_ELEMENTS,
    MAX_TABLE_ELEMENTS,
)

TABLE_NAME = _contract.TABLE_NAME

INT64_MIN, INT64_MAX = -(1 << 63), (1 << 63) - 1
INT32_MIN, INT32_MAX = -(1 << 31), (1 << 31) - 1
Fault = tuple[str, str]
"""(JSON path relative to the case, ``$`` first; message)."""


def first_outside(values, low: int, high: int) -> int | None:
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
        i = first_outside(row, INT32_MIN, INT32_MAX)
        if i is not None:
            return f".values[{r}][{i}]", "a table value is outside int32"
    return table_set_error(table.get("set", ()), rows, cols, ".set")


def table_set_error(entries: list, rows: int, cols: int, where: str) -> Fault | None:
    """A ``[row, pos, value]`` entry of a table change (``where``: its JSON path) outside the
    ``rows`` x ``cols`` table or outside int32."""
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
    i = first_outside(lut.get("values", ()), INT64_MIN, INT64_MAX)
    if i is not None:
        return f".values[{i}]", "a LUT value is outside int64"
    shift = lut.get("shift", 0)
    if n and not (INT64_MIN <= shift and shift + n - 1 <= INT64_MAX):
        return ".shift", f"shift {shift} puts LUT values outside int64"
    return lut_set_error(lut.get("set", ()), n, ".set")


def lut_set_error(entries: list, n: int, where: str) -> Fault | None:
    """An ``[index, value]`` entry of a LUT change (``where``: its JSON path) outside the LUT of
    length ``n`` or outside int64."""
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
