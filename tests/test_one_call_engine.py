"""The one-call engine (conformance/engine/one_call.py) on the entries planner's cases: each planted
bug (tests/planted/wrong_entries_planners.py) gives the differences it must, each with the rule of
docs/spec/entries-planner.md section 8 that decides its element, and the status a profile gives."""

from __future__ import annotations

import pytest
import torch

from conformance.corpus.subjects import discover
from conformance.engine.inputs import STALE_PLAN_RANGE
from conformance.engine.call_report import failure_text
from conformance.engine.call_runs import PLAIN, RUNS, output_fill
from conformance.engine.one_call import judge_call
from conformance.engine.verdict import PROFILES, status_of
from conformance.paths import CASES_ROOT
from tests.planted import wrong_entries_planners as wrong

pytestmark = pytest.mark.usefixtures("fixed_poison_seed")  # exact counts: tests/conftest.py

SUBJECT = discover()["entries-planner"]
CASES = {c["id"]: c for c in SUBJECT.load_cases(CASES_ROOT / SUBJECT.NAME)}
CPU = torch.device("cpu")
SLOT, TOKEN, POSITION, PREV = SUBJECT.OUTPUTS


def judge(case_id: str, launch):
    return judge_call(SUBJECT, CASES[case_id], launch, CPU)


def test_the_reference_passes_every_case():
    launch = SUBJECT.get_planner("python")
    counts = {cid: judge(cid, launch).count for cid in CASES}
    assert len(counts) >= 24 and set(counts.values()) == {0}


def test_a_shifted_position_is_a_contract_difference_in_both_runs():
    v = judge("entries-padding-row-between-two", wrong.shifted_position)
    assert v.count == len(RUNS) and v.by_rule == {"contract": len(RUNS)}
    assert [(d.run, d.what, d.field, d.index, d.expected, d.got) for d in v.differences] == [
        (run, "value", POSITION, 0, 0, 1) for run in RUNS]
    assert status_of(v, PROFILES["contract"]) == ("fail", ("contract",))


def test_a_write_past_the_total_is_caught_at_that_element():
    v = judge("entries-padding-row-between-two", wrong.writes_tail)
    assert {(d.what, d.field, d.index, d.got, d.rule) for d in v.differences} == {
        ("written", SLOT, 8, 0, "contract")}
    assert v.count == len(RUNS)


def test_only_the_clamped_elements_differ_and_a_project_rule_decides_them():
    v = judge("entries-lut-clamp", wrong.last_entry_clamped_wrong)
    # slots 4 and 5 and previous slot 5 are the clamped ones (raw slots 20, 21 >= lut_len 20)
    assert sorted({(d.field, d.index) for d in v.differences}) == sorted([
        (SLOT, 4), (SLOT, 5), (PREV, 5)])
    assert v.by_rule == {"lut-clamp": 3 * len(RUNS)}  # three elements, every run
    assert status_of(v, PROFILES["contract"]) == ("differs", ("lut-clamp",))
    assert status_of(v, PROFILES["all"])[0] == "fail"


def test_a_contract_bug_on_a_case_that_pins_a_project_rule_still_fails():
    v = judge("entries-lut-clamp", wrong.clamped_wrong_and_position)
    assert v.by_rule == {"lut-clamp": 3 * len(RUNS), "contract": len(RUNS)}
    assert status_of(v, PROFILES["contract"]) == ("fail", ("contract",))
    assert f"contract ({len(RUNS)}), lut-clamp ({3 * len(RUNS)})" in failure_text(v)


def test_raising_where_the_project_clamps_differs_from_that_rule_only():
    """Upstream's reference raises where the project clamps (spec section 6): the raise is decided
    by ``lut-clamp``, the situation the case reaches; the same raise on an ordinary case is the
    contract's."""
    v = judge("entries-lut-clamp", wrong.raises_on_clamp)
    raised = [d for d in v.differences if d.what == "raised"]
    assert len(raised) == len(RUNS) and {d.rule for d in raised} == {"lut-clamp"}
    assert status_of(v, PROFILES["contract"]) == ("differs", ("lut-clamp",))
    assert status_of(v, PROFILES["all"])[0] == "fail"
    v = judge("entries-padding-row-between-two", lambda **kw: 1 // 0)
    assert [(d.what, d.rule) for d in v.differences] == [("raised", "contract")] * len(RUNS)


def test_storage_rebound_with_set_leaves_the_callers_poison_never_written():
    v = judge("entries-window-and-lut", wrong.rebinds_outputs)
    assert {d.what for d in v.differences} == {"never-written"}
    assert v.count == len(RUNS) * 4 * 2  # every run, four outputs, two entries


def test_an_input_written_is_caught():
    v = judge("entries-padding-row-between-two", wrong.scribbles_on_the_table)
    assert [(d.what, d.field, d.index, d.expected, d.got) for d in v.differences] == [
        ("input", "req_to_token", 0, 0, 7)] * len(RUNS)


def test_a_value_returned_is_caught():
    v = judge("entries-padding-row-between-two", wrong.returns_the_total)
    assert [(d.what, d.got) for d in v.differences] == [("returned", "8")] * len(RUNS)


def test_an_error_with_another_text_fails_its_error_case():
    v = judge("entries-error-rank", wrong.wrong_error_text)
    assert [d.what for d in v.differences] == ["error"] * len(RUNS)
    assert v.error_steps == [{"step": 0, "id": "rank", "ok": False}]
    assert judge("entries-error-rank", SUBJECT.get_planner("python")).error_steps == [
        {"step": 0, "id": "rank", "ok": True}]


def test_no_error_on_an_error_case_is_a_contract_failure():
    v = judge("entries-error-pool-without-valid-lens", lambda **kw: None)
    assert [(d.what, d.rule) for d in v.differences] == [("no-error", "contract")] * len(RUNS)


def test_a_scalar_outside_int32_is_decided_by_its_project_rule():
    v = judge("entries-error-scalar", lambda **kw: None)  # upstream has no int32 check
    assert [(d.what, d.got, d.rule) for d in v.differences] == [
        ("error", "returned (no error)", "scalar-int32")] * len(RUNS)
    v = judge("entries-error-scalar", wrong.wrong_error_text)
    assert v.by_rule == {"scalar-int32": len(RUNS)}
    assert status_of(v, PROFILES["contract"])[0] == "differs"


def test_the_two_runs_fill_with_other_values_per_element():
    seen = {}

    def spy(**kw):
        seen.setdefault("fills", []).append(kw[SLOT].tolist())
        seen["tensor"] = kw[SLOT]
        SUBJECT.get_planner("python")(**kw)
    judge("entries-padding-row-between-two", spy)
    a, b, plain = seen["fills"]  # RUNS: two poison runs, then the plain run
    assert len(set(a)) == len(a) == 10 and all(x > 0 for x in a) and all(x < 0 for x in b)
    low, high = STALE_PLAN_RANGE  # the plain run: what a stale plan could hold
    assert plain == output_fill(PLAIN, SUBJECT.OUTPUTS.index(SLOT), seen["tensor"]).tolist()
    assert len(plain) == 10 and all(low <= x < high for x in plain)


def _zeroes_slots(**kw) -> None:
    kw[SLOT].zero_()


@pytest.mark.parametrize("case_id, rule", [("entries-overflow-enable-1", "overflow-writes-nothing"),
                                           ("entries-gate-enable-0", "contract")])
def test_the_gate_cases_must_keep_every_element(case_id, rule):
    v = judge(case_id, _zeroes_slots)
    capacity = CASES[case_id]["inputs"]["capacity"]
    assert v.count == len(RUNS) * capacity and v.by_rule == {rule: len(RUNS) * capacity}
    assert {(d.what, d.field, d.got) for d in v.differences} == {("written", SLOT, 0)}


def test_a_plain_value_error_of_the_exact_text_is_the_documented_error():
    """Upstream raises ``ValueError`` (no catalog id) where the project raises ``PlanError``: the
    spec's error is the built-in class and the exact text (docs/spec/entries-planner.md section 4)."""
    case = CASES["entries-error-pool-without-valid-lens"]
    message = case["expect"]["message"]

    def plain(**kw):
        raise ValueError(message)
    assert judge("entries-error-pool-without-valid-lens", plain).count == 0

    def other_class(**kw):
        raise RuntimeError(message)
    assert judge("entries-error-pool-without-valid-lens", other_class).by_rule == {"contract": len(RUNS)}

    def other_id(**kw):
        from impls.offsets_planner.errors import PlanError
        raise PlanError("rank", message)
    assert judge("entries-error-pool-without-valid-lens", other_id).count == len(RUNS)
