"""A hostile kernel author against the one-call engine (conformance/engine/one_call.py), calling
``judge_call`` directly with the planted planners of tests/planted/one_call_attacks.py on the cases
of ``cases/entries-planner`` and ``cases/canary-plan``.

An attack the engine catches is a plain test with the exact differences; one it does not catch is
``xfail(strict=True)``: the test states the verdict the engine should give and passes once fixed.
The upstream command's manifest and ``--reapply`` (conformance/upstream/entries_declared.py,
entries_command.py) are attacked in tests/test_one_call_attacks_upstream.py.
"""

from __future__ import annotations

import copy
import threading

import pytest
import torch

from conformance.corpus.subjects import discover
from conformance.engine.call_runs import PLAIN, RUNS
from conformance.engine.one_call import judge_call
from conformance.engine.verdict import PROFILES, status_of
from conformance.paths import CASES_ROOT
from tests.planted import one_call_attacks as hostile
from tests.planted import wrong_entries_planners as wrong

pytestmark = pytest.mark.usefixtures("fixed_poison_seed")  # exact counts: tests/conftest.py

SUBJECTS = discover()
ENTRIES, CANARY = SUBJECTS["entries-planner"], SUBJECTS["canary-plan"]
CASES = {s.NAME: {c["id"]: c for c in s.load_cases(CASES_ROOT / s.NAME)} for s in (ENTRIES, CANARY)}
CPU = torch.device("cpu")
SLOT, TOKEN, POSITION, PREV = ENTRIES.OUTPUTS
VALID = {"entries-planner": "entries-padding-row-between-two", "canary-plan": "canary-padding-row"}
"""A valid case of each subject: three requests around a padding row, T = 8 entries, capacity 10."""
ERROR = {"entries-planner": "entries-error-rank", "canary-plan": "canary-error-lut-required"}
BOTH = pytest.mark.parametrize("subject", [ENTRIES, CANARY], ids=lambda s: s.NAME)


def judge(subject, case_id: str, launch):
    return judge_call(subject, CASES[subject.NAME][case_id], launch, CPU)


def honest(subject):
    return subject.get_planner("python")


def fails(verdict) -> bool:
    return status_of(verdict, PROFILES["contract"])[0] == "fail"


def message(subject, case_id: str) -> str:
    return CASES[subject.NAME][case_id]["expect"]["message"]


# --- writes after the call returned ---------------------------------------------------------

@BOTH
def test_a_plan_written_only_after_returning_is_never_written(subject):
    gate, threads = threading.Event(), []
    try:
        v = judge(subject, VALID[subject.NAME], hostile.late_writer(honest(subject), gate, threads))
    finally:
        gate.set()
        for t in threads:
            t.join(10)
    first = subject.OUTPUTS[0]
    assert fails(v) and {d.what for d in v.differences} == {"never-written"}
    assert [(d.run, d.index) for d in v.differences if d.field == first] == [
        ("a", i) for i in range(8)] + [("b", i) for i in range(8)]


@BOTH
@pytest.mark.xfail(strict=True, reason="the outputs are read once, right after the call: a thread "
                   "the call left running writes after that unseen (fix: a thread the call started "
                   "still alive after it is a contract difference)")
def test_garbage_written_by_a_thread_after_returning_fails(subject):
    gate, threads = threading.Event(), []
    launch = hostile.garbage_after_return(honest(subject), subject.OUTPUTS[0], gate, threads)
    try:
        v = judge(subject, VALID[subject.NAME], launch)
    finally:
        gate.set()
        for t in threads:
            t.join(10)
    assert fails(v)


@BOTH
def test_a_planner_that_rewrites_the_previous_calls_outputs_fails(subject):
    launch = hostile.corrupts_the_previous_call(honest(subject), subject.OUTPUTS[0])
    assert fails(judge(subject, VALID[subject.NAME], launch))


def test_a_write_past_the_previous_calls_output_is_outside_after_it_returned():
    v = judge(ENTRIES, VALID[ENTRIES.NAME], hostile.corrupts_past_the_previous_call(
        honest(ENTRIES), SLOT))
    assert [(d.run, d.what, d.field, d.index, d.got) for d in v.differences] == [
        (run, "outside", SLOT, 10, 0) for run in ("a", "b")]
    assert v.outside == f"the planner wrote outside {SLOT} after its call returned: element 10 " \
        "of its storage (1 past its end, in the guard zone)"


# --- inputs ---------------------------------------------------------------------------------

@BOTH
@pytest.mark.xfail(strict=True, reason="an input written and restored within the call compares "
                   "equal afterwards (fix: inputs on write-protected memory in a worker process, "
                   "a fault being the difference; on a GPU, compute-sanitizer)")
def test_an_input_used_as_scratch_and_restored_fails(subject):
    launch = hostile.borrows_an_input(honest(subject), "req_to_token")
    assert fails(judge(subject, VALID[subject.NAME], launch))


# --- the poison, and what else only the harness's tensors hold --------------------------------

@pytest.mark.parametrize("attack", [hostile.right_only_under_poison,
                                    hostile.right_only_with_scratch_garbage])
def test_a_planner_that_is_wrong_outside_the_harness_is_wrong(attack):
    kwargs = ENTRIES.build(CASES[ENTRIES.NAME][VALID[ENTRIES.NAME]], CPU)
    kwargs["verify_offsets_scratch"][4:] = 0  # what a server's scratch may hold past bs + 1
    attack(honest(ENTRIES), POSITION)(**kwargs)
    assert kwargs[POSITION][:8].tolist() == [1, 1, 2, 3, 4, 0, 1, 2]  # the golden is 0, 1, 2, ...


@pytest.mark.parametrize("attack", [hostile.right_only_under_poison,
                                    hostile.right_only_with_scratch_garbage])
def test_a_planner_that_is_right_only_in_the_harness_fails(attack):
    """Runs ``a`` and ``b`` fill the outputs with poison of magnitude >= 2**40 and the scratch past
    bs with huge garbage: the ``plain`` run fills the outputs with values a stale plan could hold
    (``stale_plan_values``), and the scratch's garbage is drawn from each run's ``_seed``, never
    the subject's fixed ``SCRATCH_GARBAGE``, so a planner right only under poison or only on that
    garbage is caught."""
    assert fails(judge(ENTRIES, VALID[ENTRIES.NAME], attack(honest(ENTRIES), POSITION)))


def test_a_planner_that_forges_the_plain_runs_fill_through_the_harness_fails():
    """The fills are drawn afresh for every run (conformance/engine/inputs.py keeps no tensor a
    call could reach): a planner that overwrites what ``stale_plan_values`` hands it does not
    change what the ``plain`` run fills the outputs with, so it is still right only under poison.
    With a cache of fills (before), the ``plain`` run got the forged, poison-sized fill back and
    this planner passed."""
    from conformance.engine.inputs import stale_plan_values

    fill = stale_plan_values(torch.int64, 8).clone()
    launch = hostile.right_only_under_poison_forging_the_plain_fill(honest(ENTRIES), POSITION)
    verdict = judge(ENTRIES, VALID[ENTRIES.NAME], launch)
    assert fails(verdict)
    assert [(d.run, d.field, d.index) for d in verdict.differences] == [(PLAIN, POSITION, 0)]
    assert torch.equal(stale_plan_values(torch.int64, 8), fill)


def test_a_planner_that_rebinds_what_the_fills_are_drawn_from_fails():
    """conformance/engine/inputs.py is one of the watched namespaces: the rebinding is set back
    after the call that made it and recorded as a contract difference of that run, and the
    ``plain`` run still draws its fill from the stale-plan range (where the planner is wrong)."""
    from conformance.engine import inputs

    before = inputs.STALE_PLAN_RANGE
    launch = hostile.right_only_under_poison_narrowing_the_plain_fill(honest(ENTRIES), POSITION)
    verdict = judge(ENTRIES, VALID[ENTRIES.NAME], launch)
    assert inputs.STALE_PLAN_RANGE is before and fails(verdict)
    assert {(d.run, d.field) for d in verdict.differences} >= {
        (run, "conformance.engine.inputs.STALE_PLAN_RANGE") for run in RUNS}
    assert (PLAIN, POSITION, 0) in {(d.run, d.field, d.index) for d in verdict.differences}


def test_writing_the_value_already_there_is_no_difference():
    """The contract is on values (spec section 8): a tail rewritten with what it held is not seen,
    and by value it is no different from a tail left alone."""
    launch = hostile.rewrites_what_is_there(honest(ENTRIES), SLOT)
    assert judge(ENTRIES, VALID[ENTRIES.NAME], launch).count == 0


# --- the output tensors' shape and storage ----------------------------------------------------

def test_an_output_resized_away_is_never_written():
    v = judge(ENTRIES, VALID[ENTRIES.NAME], hostile.resizes_away(SLOT))
    assert v.count == len(RUNS) * 4 * 8 and {d.what for d in v.differences} == {"never-written"}


def test_an_output_whose_storage_is_freed_stops_the_judgement():
    """The judge cannot read the outputs: it raises, so the item errors (not a verdict, not green);
    it refuses before reading (torch reads a freed storage at a non-zero offset as memory)."""
    with pytest.raises(RuntimeError, match="unallocated storage"):
        judge(ENTRIES, VALID[ENTRIES.NAME], hostile.frees_the_storage(honest(ENTRIES), SLOT))


def test_a_write_just_past_an_output_lands_in_its_guard_zone_and_is_outside():
    """Every argument lies in an allocation with guard zones (conformance/engine/allocations.py),
    as a GPU's caching allocator leaves memory after a tensor that nothing checks: the write is
    an access outside the tensor, element 10 of a 10-element output, proved in every run."""
    v = judge(ENTRIES, VALID[ENTRIES.NAME], hostile.writes_one_past_the_end(honest(ENTRIES), SLOT))
    assert [(d.run, d.what, d.field, d.index, d.got, d.rule) for d in v.differences] == [
        (run, "outside", SLOT, 10, 0, "contract") for run in RUNS]
    assert v.outside == f"the planner wrote outside {SLOT}: element 10 of its storage (1 past its " \
        "end, in the guard zone)"
    assert status_of(v, PROFILES["contract"])[0] == "oob"


def test_a_write_into_the_hidden_half_of_a_strided_output_fails():
    """The output is every other element of an allocation twice its length (3 of 6): the planner
    writes 0 into every odd element from the allocation's start, guard zone included (the
    allocation is 16 + 6 + 16 int64 elements), raises the documented error and writes nothing
    into the view. Each odd element is an ``outside`` difference; the error is right."""
    case = "entries-error-contiguous"
    v = judge(ENTRIES, case, hostile.writes_the_hidden_half(PREV, message(ENTRIES, case)))
    assert status_of(v, PROFILES["contract"])[0] == "oob" and v.error_steps[0]["ok"]
    assert {(d.what, d.field, d.got, d.rule) for d in v.differences} == {
        ("outside", PREV, 0, "contract")}
    assert v.count == len(RUNS) * 19  # the odd elements 1, 3, ..., 37 of 38
    run_a = [(d.index, d.evidence.split(": ", 1)[1]) for d in v.differences if d.run == "a"]
    assert run_a[0] == (-15, "element -15 of its storage (15 before its start, in the guard zone)")
    assert run_a[8:11] == [  # the view is elements 0, 2 and 4 of the 6 (its index: None between)
        (None, "element 1 of its storage (which no argument's view covers)"),
        (None, "element 3 of its storage (which no argument's view covers)"),
        (5, "element 5 of its storage (which no argument's view covers)")]
    assert run_a[-1] == (21, "element 21 of its storage (16 past its end, in the guard zone)")


# --- what the call returns -----------------------------------------------------------------

def test_a_value_equal_to_none_is_still_a_value_returned():
    v = judge(ENTRIES, VALID[ENTRIES.NAME], hostile.returns(hostile.EqualsNone(), honest(ENTRIES)))
    assert [(d.run, d.what, d.field, d.got, d.rule) for d in v.differences] == [
        (run, "returned", "return", "None", "contract") for run in RUNS]


@pytest.mark.parametrize("launch", [hostile.returns(hostile.Unprintable(), honest(ENTRIES)),
                                    hostile.raises(hostile.UnprintableError)],
                         ids=["returned", "raised"])
def test_an_unprintable_return_or_raise_is_a_difference(launch):
    v = judge(ENTRIES, VALID[ENTRIES.NAME], launch)
    assert [d.what for d in v.differences] in (["returned"] * len(RUNS),
                                                          ["raised"] * len(RUNS))


# --- what the call raises ------------------------------------------------------------------

@BOTH
def test_an_error_whose_text_equals_everything_fails(subject):
    v = judge(subject, ERROR[subject.NAME], hostile.raises(hostile.MatchesAnyText))
    assert [d.what for d in v.differences] == ["error"] * len(RUNS)


@BOTH
def test_a_runtime_error_posing_as_value_error_fails(subject):
    text = message(subject, ERROR[subject.NAME])
    v = judge(subject, ERROR[subject.NAME], hostile.raises(lambda: hostile.PosesAsValueError(text)))
    assert [d.what for d in v.differences] == ["error"] * len(RUNS)


def test_an_error_id_equal_to_everything_does_not_excuse_another_text():
    v = judge(ENTRIES, "entries-error-rank", hostile.raises(lambda: hostile.LyingId("other")))
    assert [(d.what, d.got, d.rule) for d in v.differences] == [("error", "LyingId any: other",
                                                                 "contract")] * len(RUNS)
    assert v.error_steps == [{"step": 0, "id": "rank", "ok": False}]


@pytest.mark.parametrize("launch", [hostile.skips, hostile.xfails, hostile.exits, hostile.escapes],
                         ids=["pytest.skip", "pytest.xfail", "SystemExit", "BaseException"])
def test_a_base_exception_from_the_launch_is_a_raise(launch):
    try:
        v = judge(ENTRIES, VALID[ENTRIES.NAME], launch)
    except BaseException as exc:  # noqa: BLE001 - the attack is that it escapes
        pytest.fail(f"{type(exc).__name__} left judge_call")
    assert [d.what for d in v.differences] == ["raised"] * len(RUNS)


# --- the in-process judge, reached from the launch (a known threat; is it lasting?) ---------

def test_a_golden_replaced_during_the_call_does_not_hide_the_call():
    launch = hostile.rewrites_the_golden(honest(ENTRIES), POSITION)
    try:
        v = judge(ENTRIES, VALID[ENTRIES.NAME], launch)
    finally:
        launch.undo()
    seen = [(d.run, d.what, d.field, d.index) for d in v.differences]
    for run in RUNS:  # the golden was read before the call; the rebinding is itself caught
        assert (run, "value", POSITION, 0) in seen
        assert (run, "input", "impls.entries_planner.subject.golden", None) in seen
    assert v.by_rule == {"contract": v.count}


def test_a_judge_disabled_during_one_call_does_not_pass_later_planners():
    launch = hostile.disables_the_judge(honest(ENTRIES))
    try:
        judge(ENTRIES, VALID[ENTRIES.NAME], launch)
        later = judge(ENTRIES, VALID[ENTRIES.NAME], wrong.shifted_position)
    finally:
        launch.undo()
    assert later.count == len(RUNS)


def test_a_case_edited_during_the_call_stays_as_loaded():
    case_id = VALID[ENTRIES.NAME]
    saved = copy.deepcopy(CASES[ENTRIES.NAME][case_id])
    try:
        judge(ENTRIES, case_id, hostile.edits_the_case(honest(ENTRIES), POSITION))
        edited = copy.deepcopy(CASES[ENTRIES.NAME][case_id])
    finally:
        CASES[ENTRIES.NAME][case_id].clear()
        CASES[ENTRIES.NAME][case_id].update(saved)
    assert edited == saved


# --- torch's global state ------------------------------------------------------------------

def test_torch_state_changed_in_a_call_does_not_blind_later_judgements():
    _torch_state_attack(lambda: torch.set_default_dtype(torch.float64),
                        lambda: torch.set_default_dtype(torch.float32))


def test_deterministic_algorithms_toggled_in_a_call_do_not_blind_later_judgements():
    """In a child: toggling ``torch.use_deterministic_algorithms`` before Triton's interpreter has
    launched once breaks every later interpreted launch of that process (torch 2.13, Triton 3.9:
    "Cannot call @triton.jit'd outside of the scope of a kernel"), which would fail the other
    tests of this process, not pass them."""
    import subprocess
    import sys

    from conformance.paths import REPO_ROOT

    code = ("from tests.test_one_call_attacks import _torch_state_attack; import torch; "
            "from tests.conftest import FIXED_POISON_SEED; "
            "from conformance.engine.inputs import set_poison_seed; "
            "set_poison_seed(FIXED_POISON_SEED); "  # the exact differences: the fixture's seed
            "_torch_state_attack(lambda: torch.use_deterministic_algorithms(True), "
            "lambda: torch.use_deterministic_algorithms(False)); print('judged')")
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO_ROOT, capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0 and out.stdout.strip().endswith("judged"), out.stderr[-2000:]


def _torch_state_attack(how, undo):
    try:
        first = judge(ENTRIES, VALID[ENTRIES.NAME], hostile.sets_torch_state(honest(ENTRIES), how))
        later = judge(ENTRIES, VALID[ENTRIES.NAME], wrong.shifted_position)
    finally:
        undo()
    assert first.count == 0
    assert [(d.run, d.what, d.field, d.index, d.got) for d in later.differences] == [
        (run, "value", POSITION, 0, 1) for run in RUNS]


def test_a_default_device_of_meta_stops_the_judgement_rather_than_passing():
    launch = hostile.sets_torch_state(honest(ENTRIES), lambda: torch.set_default_device("meta"))
    try:
        with pytest.raises(NotImplementedError, match="meta tensor"):
            judge(ENTRIES, VALID[ENTRIES.NAME], launch)  # run b's build, after run a's call
    finally:
        torch.set_default_device(None)


def test_a_defined_element_written_wrong_over_a_fill_equal_to_its_value_is_another_value():
    """Seed 668 gives the plain run a stale-plan fill equal to the right value of
    ``out_verify_expected_positions[0]``: the planner's wrong write there is another value (the
    element is defined), not ``written`` (kept for elements the step does not define), as in
    conformance/engine/output_differences.py."""
    from conformance.engine.inputs import poison_seed, set_poison_seed

    before = poison_seed()
    set_poison_seed(668)
    try:
        later = judge(ENTRIES, VALID[ENTRIES.NAME], wrong.shifted_position)
    finally:
        set_poison_seed(before)
    assert [(d.run, d.what, d.field, d.index, d.expected, d.got) for d in later.differences] == [
        (run, "value", POSITION, 0, 0, 1) for run in RUNS]
