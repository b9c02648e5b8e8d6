"""Checks of a case that its JSON Schema cannot express, run at load time so that a faulty case
fails as one ``[load]`` item naming its file and JSON path, before anything is allocated."""

from __future__ import annotations

import torch

from conformance.corpus.arrays import MAX_ARRAY_LEN, ArraySpecError, evaluate, spec_len
from conformance.corpus.generators import MAX_LUT_LEN, MAX_TABLE_ELEMENTS
from conformance.corpus.subject import get_subject
from impls.contract import LUT_NAME, REQUEST_INPUT_NAMES, TABLE_NAME
from impls.errors import CATALOG, identify

INT64_MIN, INT64_MAX = -(1 << 63), (1 << 63) - 1
INT32_MIN, INT32_MAX = -(1 << 31), (1 << 31) - 1


def _entry_error(doc: dict, entry: str) -> tuple[str, str] | None:
    """``derived`` belongs to validator cases and ``allocate`` to allocate cases only."""
    if "derived" in doc and entry != "validator":
        return "$.derived", f"'derived' is only read by validator cases, this one is {entry!r}"
    if "allocate" in doc and entry != "allocate":
        return "$.allocate", f"'allocate' is only read by allocate cases, this one is {entry!r}"
    if entry == "allocate" and "allocate" not in doc:
        return "$", "an allocate case needs 'allocate'"
    return None


def _override_error(overrides: list, inputs: dict) -> str | None:
    """An override of a LUT the case does not have, or a device torch does not know."""
    for k, override in enumerate(overrides):
        if override.get("tensor") == LUT_NAME and inputs.get("lut") is None:
            return f"[{k}] overrides the LUT, which is null in this case"
        if "device" in override:
            try:
                torch.device(override["device"])
            except (RuntimeError, ValueError) as exc:
                return f"[{k}].device: {exc}"
    return None


def _table_value_error(table: dict) -> str | None:
    values = [v for row in table.get("values", ()) for v in row]
    values += [entry[2] for entry in table.get("set", ())]
    if any(not INT32_MIN <= v <= INT32_MAX for v in values):
        return "a table value is outside int32"
    return None


def size_error(inputs: dict) -> tuple[str, str] | None:
    """Sizes refused at load time, before anything is allocated: arrays over MAX_ARRAY_LEN
    (conformance/corpus/arrays.py), tables over MAX_TABLE_ELEMENTS and LUTs over MAX_LUT_LEN
    (conformance/corpus/generators.py), ragged explicit tables, ``set`` entries outside the table / LUT."""
    for key in ("write_req_capacity", "scratch_len"):
        if inputs.get(key, 0) > MAX_ARRAY_LEN:
            return f".inputs.{key}", f"{key} {inputs[key]} exceeds the limit of {MAX_ARRAY_LEN}"
    table = inputs.get(TABLE_NAME)
    if table is not None:
        if table["generator"] == "explicit":
            widths = {len(row) for row in table["values"]}
            if len(widths) > 1:
                return ".inputs.req_to_token.values", f"ragged table: row lengths {sorted(widths)}"
            rows, cols = len(table["values"]), widths.pop() if widths else 0
        else:
            rows, cols = table["max_reqs"], table["max_seq_len"]
        if rows * cols > MAX_TABLE_ELEMENTS:
            return (".inputs.req_to_token", f"table {rows} x {cols} = {rows * cols} elements "
                    f"exceeds the limit of {MAX_TABLE_ELEMENTS}")
        fault = _table_value_error(table)
        if fault:
            return ".inputs.req_to_token", fault
        for k, (row, pos, _) in enumerate(table.get("set", ())):
            if not (0 <= row < rows and 0 <= pos < cols):
                return (f".inputs.req_to_token.set[{k}]",
                        f"[{row}, {pos}] is outside the {rows} x {cols} table")
    lut = inputs.get("lut")
    if lut is not None:
        n = len(lut["values"]) if lut["generator"] == "explicit" else lut["len"]
        if n > MAX_LUT_LEN:
            return ".inputs.lut.len", f"LUT length {n} exceeds the limit of {MAX_LUT_LEN}"
        for k, (index, _) in enumerate(lut.get("set", ())):
            if not 0 <= index < n:
                return f".inputs.lut.set[{k}]", f"index {index} is outside the LUT of length {n}"
    return None


def semantic_error(doc: dict) -> tuple[str, str] | None:
    """Checks the schema cannot express: golden lengths, catalog ids and messages, steps."""
    steps = doc.get("steps") or [{"expect": doc["expect"], "inputs": {}}]
    entry = doc.get("entry", "launcher")
    if entry == "launcher" and "inputs" not in doc:
        return "$", "a launcher case needs 'inputs'"
    misplaced = _entry_error(doc, entry)
    if misplaced:
        return misplaced
    size = size_error(doc.get("inputs", {}))  # steps cannot change the table, LUT or buffers
    if size:
        return "$" + size[0], size[1]
    for k, step in enumerate(steps):
        where = f"$.steps[{k}]" if "steps" in doc else "$"
        inputs = {**doc.get("inputs", {}), **step.get("inputs", {})}
        expect = step["expect"]
        for name in REQUEST_INPUT_NAMES:
            try:
                values = evaluate(inputs.get(name, []))
            except (ArraySpecError, TypeError, KeyError) as exc:
                return f"{where}.inputs.{name}", f"bad array spec: {exc}"
            if any(not INT64_MIN <= v <= INT64_MAX for v in values):
                return f"{where}.inputs.{name}", "a value is outside int64"
        fault = _override_error(step.get("overrides", doc.get("overrides", [])), inputs)
        if fault:
            return f"{where}.overrides", fault
        if "error" in expect:
            err = expect["error"]
            if err["id"] not in CATALOG:
                return f"{where}.expect.error.id", f"unknown catalog id {err['id']!r}"
            found = identify(err["message"].replace("{device}", "cpu"))
            if found != err["id"]:
                return (f"{where}.expect.error.message",
                        f"message does not match the template of {err['id']!r} "
                        f"({CATALOG[err['id']].template!r}); it matches {found!r}")
            continue
        if entry != "launcher":
            return f"{where}.expect", f"entry {entry!r} cases expect an error"
        try:
            bs = spec_len(inputs.get(REQUEST_INPUT_NAMES[0], []))
            subject = get_subject(doc.get("subject"))
            for name, want in subject.defined_lengths(bs).items():
                if name in subject.scalar_outputs:
                    continue
                got = spec_len(expect[name])
                if got != want:
                    return f"{where}.expect.{name}", f"golden has {got} values, bs={bs} needs {want}"
        except (ArraySpecError, KeyError, TypeError) as exc:
            return where, f"bad array spec: {exc}"
    return None
