"""The whole plan as a pipeline (impls/canary_plan/, docs/spec/canary-plan.md): every golden of
cases/canary-plan/ against a computation of its own here (the offsets half in a few lines, the
entries half by tests/entries_oracle.py's oracle), the one-call engine on every built-in pipeline
in its CPU mode, the planted wrong pipelines (tests/planted/wrong_pipelines.py) each caught at the
field, index and rule it must be, and the mode of a mixed pipeline."""

from __future__ import annotations

import pytest
import torch

from conformance.corpus.subjects import discover
from conformance.engine.call_report import failure_text
from conformance.engine.call_runs import RUNS
from conformance.engine.one_call import judge_call
from conformance.engine.verdict import PROFILES, status_of
from conformance.paths import DATA_ROOT
from impls.canary_plan import PLANNERS, combined_mode, planner_mode
from impls.canary_plan.errors import CATALOG as WRAPPER_CATALOG
from impls.canary_plan.pipeline import compose
from impls.entries_planner.errors import identify as entries_identify
from impls.offsets_planner.errors import identify as offsets_identify
from tests.entries_oracle import linear_pool, linear_table, oracle
from tests.planted import wrong_pipelines as wrong

pytestmark = pytest.mark.usefixtures("fixed_poison_seed")  # exact counts: tests/conftest.py

SUBJECT = discover()["canary-plan"]
CASES = {c["id"]: c for c in SUBJECT.load_cases(DATA_ROOT / "cases" / SUBJECT.NAME)}
VALID = [cid for cid, c in CASES.items() if "error" not in c["expect"]]
ERRORS = [cid for cid, c in CASES.items() if "error" in c["expect"]]
CPU = torch.device("cpu")
SLOT, TOKEN, POSITION, PREV, NUM_VALID, ENABLE, WRITE_OFFSETS, SEEDS, REQS = SUBJECT.OUTPUTS


def column(spec) -> list[int]:
    return [spec["fill"]] * spec["n"] if isinstance(spec, dict) else list(spec)


def expected_plan(inputs: dict) -> dict[str, list[int]]:
    """The nine fields' leading values for a case's inputs, computed here: offsets spec section 5
    (with section 6's seed rules) for the write plan and the totals, the oracle for the entries."""
    rpi, prefix, extend = (column(inputs[n]) for n in
                           ("req_pool_indices", "prefix_lens", "extend_seq_lens"))
    shape = inputs.get("table", {"rows": 4, "cols": 16})
    table = linear_table(shape["rows"], shape["cols"]).tolist()
    for row, pos, value in inputs.get("table_set", []):
        table[row][pos] = value
    lut = None
    if "lut" in inputs:
        lut = [i + inputs["lut"]["plus"] for i in range(inputs["lut"]["len"])]
        for i, value in inputs["lut"].get("set", []):
            lut[i] = value
    pool = inputs.get("pool")
    pool = None if pool is None else linear_pool(pool["rows"], pool["cols"], pool["base"]).tolist()
    window, capacity = inputs.get("swa_window_size", 0), inputs["capacity"]
    offsets, entries = oracle(rpi, prefix, table, lut, pool, inputs.get("valid_lens"),
                              inputs.get("kv_token_id_vs_position_offset", 0), window)
    total = offsets[-1]
    open_gate = 0 < total <= capacity
    plan = {name.removeprefix("out_"): values if open_gate else [] for name, values in entries.items()}
    writes = [0]
    seeds = []
    for row, p, e in zip(rpi, prefix, extend):
        writes.append(writes[-1] + (max(e, 0) if row != 0 else 0))
        seed = -1
        if row != 0 and p > 0 and e > 0 and 0 <= row < len(table):
            seed = table[row][min(p - 1, len(table[0]) - 1)]  # past the row: clamped (past-row)
            if lut is not None and seed >= 0:
                seed = lut[min(seed, len(lut) - 1)]  # lut-clamp
        seeds.append(seed)
    plan.update({NUM_VALID: [min(total, capacity)], ENABLE: [int(total <= capacity)],
                 WRITE_OFFSETS: writes + [0] * (inputs["write_req_capacity"] - len(rpi)),
                 SEEDS: seeds, REQS: [len(rpi)]})
    return plan


def first_error(inputs: dict) -> str | None:
    """The wrapper check that fires first for these inputs (spec section 4 items 1-3), if any."""
    if inputs.get("swa_window_size", 0) > 0 and "lut" not in inputs:
        return "lut-required"
    if len(column(inputs["req_pool_indices"])) > 4096:
        return "bs-over-block"
    if inputs.get("verify_capacity", inputs["capacity"]) != inputs["capacity"]:
        return "capacity-mismatch"
    return None


def judge(case_id: str, launch):
    return judge_call(SUBJECT, CASES[case_id], launch, CPU)


def test_the_cases_cover_the_brief():
    assert len(VALID) == 9 and len(ERRORS) == 10
    assert {CASES[c]["expect"]["error"] for c in ERRORS} == {
        "lut-required", "bs-over-block", "capacity-mismatch", "dtype", "bs-exceeds-capacity",
        "pool-without-valid-lens", "scalar-int32"}


@pytest.mark.parametrize("case_id", VALID)
def test_every_golden_is_what_the_spec_computes(case_id):
    case = CASES[case_id]
    assert SUBJECT.golden(case) == expected_plan(case["inputs"])


@pytest.mark.parametrize("case_id", ERRORS)
def test_every_error_case_names_the_check_that_fires_first(case_id):
    inputs, want = CASES[case_id]["inputs"], CASES[case_id]["expect"]
    wrapper = first_error(inputs)
    if wrapper is not None:
        assert want["error"] == wrapper
        fields = {"block_size": 4096, "bs": len(column(inputs["req_pool_indices"])),
                  "verify_capacity": inputs.get("verify_capacity"), "length": inputs["capacity"]}
        assert want["message"] == WRAPPER_CATALOG[wrapper].format(**fields)
    else:  # a stage's own error, passed through: its catalog's id for this exact text
        assert want["error"] in (offsets_identify(want["message"]),
                                 entries_identify(want["message"]))


@pytest.mark.parametrize("planner", list(PLANNERS))
def test_every_pipeline_passes_every_case(planner):
    if planner_mode(planner) in ("unavailable", "gpu"):
        pytest.skip(f"{planner}: {planner_mode(planner)} here (this test runs CPU modes)")
    launch = SUBJECT.get_planner(planner)
    failures = {cid: failure_text(v) for cid in CASES if (v := judge(cid, launch)).count}
    assert failures == {} and len(CASES) == 19


def test_the_modes_of_a_pipeline():
    assert combined_mode("cpu", "cpu") == "cpu"
    assert combined_mode("interpreter", "cpu") == "interpreter"
    assert combined_mode("gpu", "cpu") == "gpu"
    assert combined_mode("gpu", "gpu") == "gpu"
    assert combined_mode("interpreter", "simulator") == "simulator"
    assert combined_mode("gpu", "simulator") == "unavailable"
    assert combined_mode(None, "cpu") == "unavailable"
    assert planner_mode("python") == "cpu"


def test_each_call_gets_a_fresh_scratch_of_4097():
    seen = []

    def spy(**kw):
        seen.append(kw["out_verify_offsets_scratch"])
        wrong.offsets_launch(**kw)
    launch = compose(spy, wrong.entries_launch)
    for _ in range(2):
        launch(**SUBJECT.build(CASES["canary-padding-row"], CPU))
    assert [(s.shape, s.dtype) for s in seen] == [((4097,), torch.int64)] * 2
    assert seen[0].data_ptr() != seen[1].data_ptr()
    assert seen[0][:4].tolist() == seen[1][:4].tolist() == [0, 5, 5, 8]


def test_the_rules_of_the_project_elements():
    case = CASES["canary-outside-the-table"]
    rules = SUBJECT.element_rules(case, SUBJECT.build(case, CPU))
    assert rules[SEEDS] == ["row-out-of-table", "past-row"]
    outside = "entry-outside-table"
    assert [i for i, r in enumerate(rules[SLOT]) if r == outside] == [0, 1, 18, 19]
    assert [i for i, r in enumerate(rules[PREV]) if r == outside] == [1, 19]
    assert set(rules[POSITION]) == set(rules[WRITE_OFFSETS]) == {"contract"}
    case = CASES["canary-lut-clamp"]
    rules = SUBJECT.element_rules(case, SUBJECT.build(case, CPU))
    assert rules[SEEDS] == ["lut-clamp"]
    assert [i for i, r in enumerate(rules[SLOT]) if r == "lut-clamp"] == [4, 5]
    assert [i for i, r in enumerate(rules[PREV]) if r == "lut-clamp"] == [5]


def _where(verdict) -> set[tuple]:
    return {(d.what, d.field, d.index, d.rule) for d in verdict.differences}


def test_forgetting_to_zero_write_offsets_leaves_its_tail():
    v = judge("canary-prefill-and-two-decodes", wrong.forgets_to_zero_write_offsets)
    assert _where(v) == {("never-written", WRITE_OFFSETS, 4, "contract")} and v.count == len(RUNS)
    assert {d.expected for d in v.differences} == {0}
    v = judge("canary-bs-zero", wrong.forgets_to_zero_write_offsets)
    assert _where(v) == {("never-written", WRITE_OFFSETS, i, "contract") for i in (1, 2)}


def test_zeroing_after_the_offsets_stage_wipes_the_prefix_sums():
    v = judge("canary-prefill-and-two-decodes", wrong.zeroes_after_the_offsets_stage)
    assert _where(v) == {("value", WRITE_OFFSETS, i, "contract") for i in (1, 2, 3)}
    assert sorted((d.index, d.expected, d.got) for d in v.differences if d.run == "a") == [
        (1, 8, 0), (2, 9, 0), (3, 10, 0)]


def test_an_unfilled_scratch_leaves_every_entry_unwritten():
    v = judge("canary-padding-row", wrong.entries_read_an_unfilled_scratch)
    assert _where(v) == {("never-written", f, i, "contract")
                         for f in (SLOT, TOKEN, POSITION, PREV) for i in range(8)}
    assert v.count == len(RUNS) * 4 * 8


def test_skipping_the_capacity_check_returns_and_writes():
    v = judge("canary-error-capacity-mismatch", wrong.skips_the_capacity_check)
    assert [(d.what, d.rule) for d in v.differences if d.field == "error"] == [
        ("no-error", "contract")] * len(RUNS)
    written = {(d.field, d.index) for d in v.differences if d.what == "written"}
    assert {(SLOT, 0), (SLOT, 1), (NUM_VALID, 0), (WRITE_OFFSETS, 1), (SEEDS, 0)} <= written
    assert (SLOT, 2) not in written  # two entries: a prefix of 2


def test_the_lut_check_left_to_the_offsets_stage_has_another_id():
    v = judge("canary-error-lut-required", wrong.skips_the_lut_check)
    assert [(d.what, d.field, d.rule) for d in v.differences] == [("error", "error", "contract")] * len(RUNS)
    assert v.differences[0].got.startswith("PlanError swa-lut-required: kv-canary: "
                                           "launch_canary_plan_kernels requires")
    assert v.error_steps == [{"step": 0, "id": "lut-required", "ok": False}]


def test_zeroing_before_the_checks_writes_on_an_error():
    v = judge("canary-error-capacity-mismatch", wrong.zeroes_before_checking)
    assert _where(v) == {("written", WRITE_OFFSETS, i, "contract") for i in (0, 1)}
    assert v.error_steps == [{"step": 0, "id": "capacity-mismatch", "ok": True}]


def test_a_scratch_kept_from_an_earlier_call_plans_the_old_offsets():
    stale = wrong.StaleScratch()
    stale(**SUBJECT.build(CASES["canary-padding-row"], CPU))  # its scratch: [0, 5, 5, 8]
    v = judge("canary-pool-offset-plus-one", stale)  # [0, 3, 5]: entries 3 and 4 are request 1's
    assert _where(v) == {("value", f, i, "contract") for f in (SLOT, TOKEN, POSITION, PREV)
                         for i in (3, 4)}
    got = {(d.field, d.index): (d.expected, d.got) for d in v.differences if d.run == "a"}
    assert got[(POSITION, 3)] == (0, 3) and got[(SLOT, 4)] == (33, 20)
    assert got[(TOKEN, 3)] == (1033, -1) and got[(PREV, 3)] == (-1, 18)


def test_the_right_pipeline_passes_what_the_wrong_ones_fail():
    for case_id in ("canary-prefill-and-two-decodes", "canary-padding-row",
                    "canary-error-capacity-mismatch", "canary-error-lut-required",
                    "canary-pool-offset-plus-one", "canary-bs-zero"):
        assert judge(case_id, wrong.RIGHT).count == 0


def test_upstreams_order_writes_the_write_plan_before_an_entries_error():
    v = judge("canary-error-pool-without-valid-lens", wrong.validates_at_each_stage)
    assert v.error_steps == [{"step": 0, "id": "pool-without-valid-lens", "ok": True}]
    assert {(d.field, d.index) for d in v.differences} == {
        (WRITE_OFFSETS, 0), (WRITE_OFFSETS, 1), (SEEDS, 0), (NUM_VALID, 0), (ENABLE, 0),
        (REQS, 0)}
    assert {(d.what, d.rule) for d in v.differences} == {("written", "validate-first")}
    assert status_of(v, PROFILES["contract"]) == ("differs", ("validate-first",))
    assert status_of(v, PROFILES["all"])[0] == "fail"  # a project rule: the built-ins keep it
    offsets_error = judge("canary-error-offsets-dtype", wrong.validates_at_each_stage)
    assert {(d.field, d.rule) for d in offsets_error.differences} == {
        (WRITE_OFFSETS, "validate-first")}  # upstream zeroes write_offsets before the offsets stage


def test_a_wrong_clamped_seed_is_the_project_rules_difference():
    v = judge("canary-lut-clamp", wrong.drops_the_clamped_seed)
    assert _where(v) == {("value", SEEDS, 0, "lut-clamp")} and v.count == len(RUNS)
    assert status_of(v, PROFILES["contract"]) == ("differs", ("lut-clamp",))
    assert status_of(v, PROFILES["all"])[0] == "fail"
    assert judge("canary-swa-window-lut", wrong.drops_the_clamped_seed).by_rule == {"contract": len(RUNS)}


@pytest.mark.parametrize("case_id", [c for c in CASES if CASES[c].get("pins")])
def test_a_pinned_rule_is_reached(case_id):
    case = CASES[case_id]
    if "error" in case["expect"]:
        assert SUBJECT.error_rule(case) == case["pins"]
    else:
        rules = SUBJECT.element_rules(case, SUBJECT.build(case, CPU))
        assert case["pins"] in {r for column in rules.values() for r in column}


@pytest.mark.parametrize("case_id, stage", [
    ("canary-error-capacity-mismatch", None), ("canary-error-lut-required", None),
    ("canary-error-offsets-dtype", "offsets"), ("canary-error-offsets-bs-exceeds-writes", "offsets"),
    ("canary-error-pool-without-valid-lens", "entries"), ("canary-error-entries-scalar", "entries"),
    ("canary-prefill-and-two-decodes", None)])
def test_the_failing_stage_is_the_one_whose_validator_refuses(case_id, stage):
    kwargs = SUBJECT.build(CASES[case_id], CPU)
    assert SUBJECT.failing_stage(kwargs) == stage
    if "error" in CASES[case_id]["expect"]:
        rules = SUBJECT.error_element_rules(CASES[case_id], kwargs)
        decided = {name for name, column in rules.items() if "validate-first" in column}
        assert decided == set(SUBJECT.WRITTEN_BEFORE.get(stage, ()))
        assert all(len(rules[n]) == kwargs[n].numel() for n in SUBJECT.OUTPUTS)
