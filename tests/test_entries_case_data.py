"""The entries-planner cases of ``cases/entries-planner/*.jsonl`` (format: its README): every golden
is checked against the test oracle, and every case runs on the three entries planners.

The harness runs them too (``pytest conformance/ --subject entries-planner``); this test keeps each
golden equal to the oracle's, which the harness does not compute.
"""

from __future__ import annotations

import pytest

from impls.entries_planner import PLANNERS, get_planner
from impls.entries_planner.errors import CATALOG
from impls.offsets_planner.errors import PlanError
from tests.entries_oracle import POISON, load_cases, materialise, outputs

CASES = load_cases()
BY_ID = {case["id"]: case for case in CASES}


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
        message = want["message"].replace("{device}", "cpu")  # the cases README: the call's device
        assert (info.value.error_id, str(info.value)) == (want["error"], message)
        return
    planner(**kwargs)
    got = outputs(kwargs)
    capacity = kwargs["out_verify_slot_indices"].shape[0]
    for name, values in got.items():
        written = [] if want.get("untouched") else want[name]
        assert values == written + [POISON] * (capacity - len(written)), name
