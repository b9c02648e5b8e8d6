"""The entries-planner cases of ``cases/entries-planner/*.jsonl`` (format: its README): every golden
is checked against the test oracle, and every case runs on the three entries planners.

The harness does not run these files yet; this test keeps them correct until it does.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

from impls.entries_planner import PLANNERS, get_planner
from impls.entries_planner.errors import CATALOG
from impls.errors import PlanError
from tests.entries_oracle import POISON, build, linear_pool, linear_table, outputs

FOLDER = Path(__file__).resolve().parents[1] / "cases" / "entries-planner"
CASES = [json.loads(line) for path in sorted(FOLDER.glob("*.jsonl"))
         for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
BY_ID = {case["id"]: case for case in CASES}
DTYPES = {"int32": torch.int32, "int64": torch.int64}


def materialise(case):
    """(kwargs, oracle offsets, oracle entries) for one case's ``inputs``."""
    spec = dict(case["inputs"])
    shape = spec.pop("table", {"rows": 4, "cols": 16})
    table = linear_table(shape["rows"], shape["cols"])
    for row, pos, value in spec.pop("table_set", []):
        table[row, pos] = value
    lut = None
    if (lut_spec := spec.pop("lut", None)) is not None:
        lut = torch.arange(lut_spec["len"], dtype=torch.int64) + lut_spec["plus"]
        for index, value in lut_spec.get("set", []):
            lut[index] = value
    pool = None
    if (pool_spec := spec.pop("pool", None)) is not None:
        pool = linear_pool(pool_spec["rows"], pool_spec["cols"], pool_spec["base"])
    change = spec.pop("change", {})
    kwargs, offsets, expected = build(
        spec.pop("req_pool_indices"), spec.pop("prefix_lens"), table=table, lut=lut, pool=pool,
        valid=spec.pop("valid_lens", None), offset=spec.pop("kv_token_id_vs_position_offset", 0),
        window=spec.pop("swa_window_size", 0), capacity=spec.pop("capacity"),
        enable=spec.pop("verify_enable", None), scratch=spec.pop("scratch", None))
    assert not spec, f"unknown input fields {sorted(spec)}"
    for name, how in change.items():
        tensor = kwargs[name]
        if "shape" in how:
            tensor = torch.zeros(how["shape"], dtype=tensor.dtype)
        if "dtype" in how:
            tensor = tensor.to(DTYPES[how["dtype"]])
        if how.get("strided"):
            tensor = torch.stack([tensor, tensor], dim=-1)[..., 0]
        if "device" in how:
            tensor = tensor.to(how["device"])
        kwargs[name] = tensor
    return kwargs, offsets, expected


def test_the_folder_holds_cases_with_unique_ids():
    assert len(CASES) >= 20 and len(BY_ID) == len(CASES)
    assert all(c["id"].startswith("entries-") and c["source"].startswith(
        "docs/spec/entries-planner.md §") for c in CASES)


@pytest.mark.parametrize("case_id", [c["id"] for c in CASES if "error" not in c["expect"]])
def test_each_golden_agrees_with_the_oracle(case_id):
    case = BY_ID[case_id]
    kwargs, offsets, expected = materialise(case)
    want = case["expect"]
    assert offsets == want["scratch"]
    if want.get("untouched"):
        total, capacity = offsets[-1], kwargs["out_verify_slot_indices"].shape[0]
        enable = int(kwargs["verify_enable"][0])
        assert total <= 0 or enable == 0 or total > capacity  # the gate is shut
    else:
        assert expected == {k: want[k] for k in expected}


@pytest.fixture(scope="module", params=list(PLANNERS))
def planner(request):
    try:
        return get_planner(request.param)
    except RuntimeError as exc:
        pytest.skip(str(exc))


@pytest.mark.parametrize("case_id", list(BY_ID))
def test_each_case_on_each_planner(planner, case_id):
    case = BY_ID[case_id]
    kwargs, offsets, _ = materialise(case)
    want = case["expect"]
    if "error" in want:
        assert want["error"] in CATALOG
        with pytest.raises(PlanError) as info:
            planner(**kwargs)
        assert (info.value.error_id, str(info.value)) == (want["error"], want["message"])
        return
    planner(**kwargs)
    got = outputs(kwargs)
    capacity = kwargs["out_verify_slot_indices"].shape[0]
    for name, values in got.items():
        written = [] if want.get("untouched") else want[name]
        assert values == written + [POISON] * (capacity - len(written)), name
