"""The entries planner as a subject of the harness's one-call engine: where its cases are, how a
case's inputs are built, which elements a golden defines and which rule of spec section 8
(``docs/spec/entries-planner.md``) decides each element.

The harness reads this module by attribute (``conformance/corpus/subjects.py`` lists them) and
this module imports nothing of the harness. A case is one JSON object of
``cases/entries-planner/*.jsonl`` (format: that folder's README); each is one launcher call.
"""

from __future__ import annotations

import json
from pathlib import Path

import torch

from impls.entries_planner import PLANNERS, get_planner, planner_mode
from impls.entries_planner import upstream as _upstream
from impls.entries_planner.contract import (
    ENABLE_NAME,
    LUT_NAME,
    OFFSET_NAME,
    OUTPUT_NAMES,
    POOL_NAME,
    SCRATCH_NAME,
    TABLE_NAME,
    VALID_LENS_NAME,
    WINDOW_NAME,
)
from impls.offsets_planner.errors import PlanError

__all__ = ["NAME", "ENGINE", "CASE_GLOB", "SPEC", "OUTPUTS", "ERROR", "PLANNERS", "get_planner",
           "planner_mode", "load_cases", "build", "expected_error", "error_rule", "golden",
           "element_rules", "UPSTREAM_ENTRY", "UPSTREAM_TREE"]

NAME = "entries-planner"
"""The subject's name: ``--subject entries-planner``, and its folder under ``cases/``."""
ENGINE = "one-call"
"""Each case is one launcher call judged element by element (``conformance/engine/one_call.py``)."""
CASE_GLOB = "*.jsonl"
SPEC = "docs/spec/entries-planner.md"
OUTPUTS: tuple[str, ...] = OUTPUT_NAMES
"""The four int64 [verify_capacity] outputs, in the launcher's order."""
ERROR = PlanError
"""What a planner raises for a documented error (``error_id`` and the exact text, spec section 4)."""
CONTRACT, UNSPECIFIED = "contract", "unspecified"
"""Spec section 8: the contract's rule, and elements nothing is judged on but safety."""
OVERFLOW = "overflow-writes-nothing"
SCALAR_RULE = "scalar-int32"
SCRATCH_GARBAGE = 1 << 40
"""What the scratch holds past [bs] (three elements) in a call outside the harness's runs: a planner
that reads there plans nonsense."""


def scratch_garbage(case: dict) -> list[int]:
    """The scratch's three elements past [bs]: drawn from the run's ``_seed`` (the harness's, which
    a planner cannot know) when the case carries one, huge in the poison runs (a planner reading
    there plans nonsense) and plan-like in the ``plain`` run (a planner cannot tell the harness
    by them); else :data:`SCRATCH_GARBAGE`."""
    seed = case.get("_seed")
    if seed is None:
        return [SCRATCH_GARBAGE] * 3
    low, high = (0, 1 << 12) if case.get("_run") == "plain" else (1 << 40, 1 << 41)
    gen = torch.Generator().manual_seed(int(seed))
    return torch.randint(low, high, (3,), generator=gen).tolist()
DEFAULT_TABLE = {"rows": 4, "cols": 16}
UPSTREAM_ENTRY = _upstream
"""Upstream's launcher that ``python -m conformance upstream-entries`` builds from a release's wheel
and judges on these cases (:mod:`impls.entries_planner.upstream`: its module and function, the
function that builds it, the hazard pins, the random batches)."""
UPSTREAM_TREE = _upstream
"""What of a release's wheel is laid out for it (the same module: its start files, code and data
roots, its one stand-in)."""
DTYPES = {"int32": torch.int32, "int64": torch.int64}


def load_cases(folder: Path) -> list[dict]:
    """Every case of ``folder``'s ``*.jsonl`` files, files in name order, each with ``_file`` and
    ``_line`` (1-based) added for its location. A line that is not a case (not JSON, not an object
    with a string id) is ``{"_fault": why, "_file", "_line"}``: the harness reports it and runs
    the rest."""
    cases = []
    for path in sorted(Path(folder).glob(CASE_GLOB)):
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if not line.strip():
                continue
            where = {"_file": str(path), "_line": number}
            try:
                case = json.loads(line)
            except json.JSONDecodeError as exc:
                cases.append({"_fault": f"not JSON: {exc}", **where})
                continue
            if not isinstance(case, dict) or not isinstance(case.get("id"), str):
                cases.append({"_fault": "a case is a JSON object with a string id", **where})
                continue
            cases.append({**case, **where})
    return cases


def linear_table(rows: int, cols: int) -> torch.Tensor:
    """``req_to_token[row, pos] = row * cols + pos``, int32 [rows, cols] (spec section 9)."""
    return torch.arange(rows * cols, dtype=torch.int32).reshape(rows, cols)


def linear_pool(rows: int, cols: int, base: int) -> torch.Tensor:
    """``pool[row, col] = base + row * cols + col``, int32 [rows, cols]."""
    return (torch.arange(rows * cols, dtype=torch.int32) + base).reshape(rows, cols)


def table_from(shape: dict, sets: list) -> torch.Tensor:
    """A case's ``req_to_token``: :func:`linear_table` of ``shape`` (``{"rows", "cols"}``) with
    each ``[row, pos, value]`` of ``sets`` written over it."""
    table = linear_table(shape["rows"], shape["cols"])
    for row, pos, value in sets:
        table[row, pos] = value
    return table


def lut_from(spec: dict | None) -> torch.Tensor | None:
    """A case's LUT, int64 [len]: ``arange(len) + plus`` with each ``[index, value]`` of ``set``
    written over it; None without a spec."""
    if spec is None:
        return None
    lut = torch.arange(spec["len"], dtype=torch.int64) + spec["plus"]
    for index, value in spec.get("set", []):
        lut[index] = value
    return lut


def pool_from(spec: dict | None) -> torch.Tensor | None:
    """A case's expected-token pool: :func:`linear_pool` of ``{"rows", "cols", "base"}``; None
    without a spec."""
    return None if spec is None else linear_pool(spec["rows"], spec["cols"], spec["base"])


def window_length(prefix: int, window: int) -> int:
    """Positions of a request's window: ``[max(0, prefix - W), prefix)``, the whole prefix when
    ``W <= 0`` (spec section 5)."""
    return max(prefix, 0) - (max(0, prefix - window) if window > 0 else 0)


def exclusive_offsets(rpi: list[int], prefix: list[int], window: int) -> list[int]:
    """The scratch the offsets planner writes, [bs + 1]: the exclusive prefix sum of the live
    requests' window lengths (a padding row, 0, has none)."""
    out = [0]
    for row, p in zip(rpi, prefix):
        out.append(out[-1] + (window_length(p, window) if row != 0 else 0))
    return out


def build(case: dict, device: torch.device) -> dict:
    """The launcher's 14 keyword arguments for ``case`` on ``device``; the outputs, int64
    [capacity], zero (the harness fills them before the call); the case's ``change`` applied last.

    Raises:
        ValueError: an unknown input field, or an ``expect.scratch`` that is not the scratch built.
    """
    spec = dict(case["inputs"])
    rpi, prefix = list(spec.pop("req_pool_indices")), list(spec.pop("prefix_lens"))
    table = table_from(spec.pop("table", DEFAULT_TABLE), spec.pop("table_set", []))
    lut, pool = lut_from(spec.pop("lut", None)), pool_from(spec.pop("pool", None))
    valid = spec.pop("valid_lens", None)
    window = spec.pop("swa_window_size", 0)
    offsets = list(spec.pop("scratch", None) or exclusive_offsets(rpi, prefix, window))
    capacity = spec.pop("capacity")
    enable = spec.pop("verify_enable", int(offsets[-1] <= capacity))
    offset = spec.pop("kv_token_id_vs_position_offset", 0)
    change = spec.pop("change", {})
    if spec:
        raise ValueError(f"unknown input fields {sorted(spec)}")
    stated = case.get("expect", {}).get("scratch")
    if stated is not None and stated != offsets:
        raise ValueError(f"expect.scratch {stated} is not the scratch the inputs build, {offsets}")
    kwargs = {
        "req_pool_indices": torch.tensor(rpi, dtype=torch.int64),
        "prefix_lens": torch.tensor(prefix, dtype=torch.int64),
        TABLE_NAME: table, LUT_NAME: lut,
        SCRATCH_NAME: torch.tensor(offsets + scratch_garbage(case), dtype=torch.int64),
        ENABLE_NAME: torch.tensor([enable], dtype=torch.int32),
        POOL_NAME: pool,
        VALID_LENS_NAME: None if valid is None else torch.tensor(valid, dtype=torch.int64),
        **{name: torch.zeros(capacity, dtype=torch.int64) for name in OUTPUTS},
        OFFSET_NAME: offset, WINDOW_NAME: window,
    }
    kwargs = {k: v.to(device) if isinstance(v, torch.Tensor) else v for k, v in kwargs.items()}
    for name, how in change.items():
        kwargs[name] = changed(kwargs[name], how)
    return kwargs


def changed(tensor: torch.Tensor, how: dict) -> torch.Tensor:
    """``tensor`` as a case's ``change`` makes it (README of the case folder): ``shape`` (zeros of
    that shape), ``dtype``, ``strided`` (a non-contiguous view), ``device``, applied in that order."""
    if "shape" in how:
        tensor = torch.zeros(how["shape"], dtype=tensor.dtype, device=tensor.device)
    if "dtype" in how:
        tensor = tensor.to(DTYPES[how["dtype"]])
    if how.get("strided"):
        tensor = torch.stack([tensor, tensor], dim=-1)[..., 0]
    if "device" in how:
        tensor = tensor.to(how["device"])
    return tensor


def expected_error(case: dict) -> tuple[str, str] | None:
    """(catalog id, exact message) of an error case, else None; ``{device}`` in the message is the
    device the call runs on (``case["_device"]``, which the engine sets; default ``cpu``)."""
    want = case["expect"]
    if "error" not in want:
        return None
    return want["error"], want["message"].replace("{device}", case.get("_device", "cpu"))


def error_rule(case: dict) -> str:
    """The rule deciding what a call raises (spec section 8): for an error case, ``scalar-int32``
    for a scalar outside int32 (section 4 item 4, catalog id ``scalar-int32``), else the
    contract's; for a valid case, a raise (or a device trap) is decided by the project rule of the
    situation the case pins (``pins``: where upstream's reference raises, ``lut-clamp`` and
    ``lut-empty``, or its kernel traps, ``overflow-writes-nothing``), else by the contract."""
    if "error" in case["expect"]:
        return SCALAR_RULE if case["expect"]["error"] == SCALAR_RULE else CONTRACT
    return case.get("pins") or CONTRACT


def golden(case: dict) -> dict[str, list[int]]:
    """{output: the values of its elements [0, total)} of a valid case; empty lists when nothing
    may be written (``untouched``)."""
    want = case["expect"]
    if want.get("untouched"):
        return {name: [] for name in OUTPUTS}
    return {name: list(want[name]) for name in OUTPUTS}


def element_rules(case: dict, kwargs: dict) -> dict[str, list[str]]:
    """{output: the rule deciding each of its elements} (spec section 8), from the inputs ``kwargs``
    (``build``'s, any device): ``contract``, ``unspecified`` (not judged but for safety) or a project
    rule key. The tail t >= T and a shut gate are the contract's; a step with T > C and E != 0 is
    ``overflow-writes-nothing`` everywhere."""
    values = {k: v.tolist() if isinstance(v, torch.Tensor) else v for k, v in kwargs.items()}
    rpi, prefix = values["req_pool_indices"], values["prefix_lens"]
    capacity = len(values[OUTPUTS[0]])
    rules = {name: [CONTRACT] * capacity for name in OUTPUTS}
    if not isinstance(rpi, list) or not isinstance(prefix, list) or len(rpi) != len(prefix):
        return rules  # an error case: nothing is written, which is the contract's
    bs, window = len(rpi), values[WINDOW_NAME]
    offsets = values[SCRATCH_NAME][: bs + 1]
    total, enable = offsets[-1], values[ENABLE_NAME][0]
    if total > capacity and enable != 0:
        return {name: [OVERFLOW] * capacity for name in OUTPUTS}
    if total <= 0 or enable == 0:
        return rules
    if offsets != exclusive_offsets(rpi, prefix, window):
        for name in OUTPUTS:
            rules[name][: min(total, capacity)] = [UNSPECIFIED] * min(total, capacity)
        return rules
    slot, prev, token = OUTPUTS[0], OUTPUTS[3], OUTPUTS[1]
    for r, row in enumerate(rpi):
        if row == 0:
            continue
        start = max(0, prefix[r] - window) if window > 0 else 0
        for p in range(start, max(prefix[r], 0)):
            t = offsets[r] + p - start
            rules[slot][t] = _slot_rule(values, row, p)
            rules[prev][t] = _slot_rule(values, row, p - 1) if p >= 1 else CONTRACT
            rules[token][t] = _token_rule(values, r, row, p)
    return rules


def _slot_rule(values: dict, row: int, pos: int) -> str:
    table, lut = values[TABLE_NAME], values[LUT_NAME]
    if not (0 <= row < len(table) and 0 <= pos < len(table[0])):
        return "entry-outside-table"
    raw = table[row][pos]
    if lut is None or raw < 0:
        return CONTRACT
    if len(lut) == 0:
        return "lut-empty"
    return "lut-clamp" if raw >= len(lut) else CONTRACT


def _token_rule(values: dict, r: int, row: int, pos: int) -> str:
    pool, valid = values[POOL_NAME], values[VALID_LENS_NAME]
    if pool is None or valid is None:
        return CONTRACT
    at = pos + values[OFFSET_NAME]
    if 0 <= at < valid[r] and not (0 <= row < len(pool) and at < len(pool[0])):
        return "pool-outside"
    return CONTRACT
