"""The plain run (conformance/engine/plain.py): a valid case runs once more on buffers as a server
hands them over, and a planner right only on the poisoned, guarded buffers fails by it, in process
and in the isolation worker (planted: tests/planted/fixture_detectors.py)."""

from __future__ import annotations

import json

import pytest
import torch

from conformance.corpus.loader import load_corpus
from conformance.engine.inputs import OUTPUT_DTYPES
from conformance.engine.plain import PLAIN, plain_fill
from conformance.engine.runner import ConformanceFailure, Target, resolve_device, run_case
from conformance.engine.steps import RUNS, CaseInputs, runs_of
from conformance.robustness.isolated_case import case_request, judge_observed
from conformance.robustness.isolation import WorkerPool
from impls.offsets_planner.contract import OUTPUT_NAMES, REQUEST_INPUT_NAMES, TABLE_INPUT_NAMES
from impls.offsets_planner.python_planner import launch as python_launch
from tests.planted import fixture_detectors
from tests.subproc import run_pytest

CPU = resolve_device("cpu")
DETECTORS = ("wrong_when_zero_filled", "wrong_without_guard")
ONLY_PLAIN = "both poisoned runs matched, so this appeared only on plain buffers"
CASES = {c.id: c for c in load_corpus()[0]}
PAST_BS = "hazard-write-offsets-past-bs-untouched"  # bs 2, write_req_capacity 8
ONE_STEP, MULTI_STEP = "spec7-no-prefix", next(
    c.id for c in CASES.values() if len(c.steps) > 2 and runs_of(c)[-1] == PLAIN)


def _whole(tensor: torch.Tensor) -> bool:
    """Whether ``tensor`` is alone in its allocation (no guard zone, no tail)."""
    return tensor.storage_offset() == 0 and \
        tensor.untyped_storage().nbytes() == tensor.numel() * tensor.element_size()


def test_every_launcher_case_runs_plain_error_cases_included():
    """Error cases too (tests/test_hostile13.py: a planner that raised its documented errors only
    on poisoned outputs passed every error case while they ran poisoned only)."""
    assert runs_of(CASES[ONE_STEP]) == (*RUNS, PLAIN)
    errors = [c for c in CASES.values() if c.entry == "launcher" and
              any(s.error is not None for s in c.steps)]
    assert errors and all(runs_of(c) == (*RUNS, PLAIN) for c in errors)


def test_the_plain_run_hands_over_zero_filled_tensors_of_their_own():
    case = CASES[MULTI_STEP]
    built = [b for b in CaseInputs(case, CPU).steps(runs=runs_of(case), goldens=True)
             if b.run == PLAIN]
    assert [b.index for b in built] == list(range(len(case.steps)))
    first = built[0]
    assert first.guard == 0 and first.run_index == len(RUNS)
    for name in OUTPUT_NAMES:
        tensor = first.kwargs[name]
        assert _whole(tensor) and tensor.dtype == OUTPUT_DTYPES[name]
        assert first.poison[name] == [plain_fill(name)] * tensor.numel()
    assert plain_fill("out_verify_enable") == 1 and plain_fill("out_write_offsets") == 0
    for name in (*REQUEST_INPUT_NAMES, TABLE_INPUT_NAMES[0]):
        assert _whole(first.kwargs[name]), name
    # the outputs persist across the steps of the plain run, as a server's plan does
    assert all(b.buffers is first.buffers for b in built)
    poisoned = next(CaseInputs(case, CPU).steps())
    assert not _whole(poisoned.kwargs[OUTPUT_NAMES[0]]) and poisoned.guard > 0


@pytest.mark.parametrize("case_id", [ONE_STEP, MULTI_STEP])
@pytest.mark.parametrize("name", DETECTORS)
def test_a_planner_wrong_only_on_plain_buffers_fails_by_the_plain_run(name, case_id):
    with pytest.raises(ConformanceFailure) as failed:
        run_case(CASES[case_id], Target(name, getattr(fixture_detectors, name), CPU))
    text, verdict = str(failed.value), failed.value.verdict
    assert ONLY_PLAIN in text
    assert "out_verify_num_valid: 1 element(s) differ, first at index 0" in text
    assert {(d.run, d.field, d.index) for d in verdict.differences} >= {
        (PLAIN, "out_verify_num_valid", 0)}
    assert {d.run for d in verdict.differences} == {PLAIN}


def test_a_plain_run_element_still_holding_the_callers_zero_is_a_value_not_never_written():
    """On the plain run a 0 that was 0 before the call may be the planner's own write: the
    difference is ``value`` (never ``never-written``, which only a poison fill proves)."""
    with pytest.raises(ConformanceFailure) as failed:
        run_case(CASES[ONE_STEP], Target("keeps_zero", fixture_detectors.keeps_zero_when_zero_filled,
                                         CPU))
    diffs = [(d.run, d.field, d.index, d.what, d.got) for d in failed.value.verdict.differences]
    assert diffs == [(PLAIN, "out_write_num_valid_reqs", 0, "value", 0)], diffs
    assert "never written" not in str(failed.value), str(failed.value)


def test_the_python_planner_passes_the_plain_run():
    for case_id in (ONE_STEP, MULTI_STEP):
        run_case(CASES[case_id], Target("python", python_launch, CPU))


def zeroes_write_offsets(**kwargs) -> None:
    """upstream's wrapper (``write_offsets.zero_()``) inside the planner: writes past bs."""
    kwargs["out_write_offsets"].zero_()
    python_launch(**kwargs)


def test_untouched_elements_of_the_plain_run_are_judged_against_the_plain_fill():
    with pytest.raises(ConformanceFailure) as failed:
        run_case(CASES[PAST_BS], Target("zeroes", zeroes_write_offsets, CPU))
    diffs = failed.value.verdict.differences
    assert diffs and {d.run for d in diffs} == set(RUNS)  # zero past bs is the plain fill
    assert {(d.field, d.what) for d in diffs} == {("out_write_offsets", "written")}


def test_the_plain_run_happens_in_the_isolation_worker_too():
    planners = [f"tests.planted.fixture_detectors:{name}" for name in DETECTORS]
    pool = WorkerPool()
    try:
        for planner in planners:  # both workers import at once
            pool.get(planner).spawn()
        answers = {p: pool.get(p).run(case_request(CASES[ONE_STEP], p, "cpu"), 60.0)
                   for p in planners}
    finally:
        pool.close()
    for planner, answer in answers.items():
        assert answer["status"] == "observed", answer
        assert [s.run for s in answer["observation"].steps] == [*RUNS, PLAIN]
        with pytest.raises(ConformanceFailure, match=ONLY_PLAIN):
            judge_observed(CASES[ONE_STEP], planner, answer)


@pytest.mark.slow  # about 20 s: a pytest run and two isolation workers
def test_a_whole_run_fails_the_detectors_by_the_plain_run(tmp_path):
    planners = [f"tests.planted.fixture_detectors:{name}" for name in DETECTORS]
    proc, items = run_pytest(tmp_path, *(a for p in planners for a in ("--planner", p)),
                             "--case", ONE_STEP, "--isolate-timeout", "60")
    assert proc.returncode == 1, proc.stdout[-3000:]
    results = json.loads((tmp_path / "results.json").read_text())
    assert {r["planner"]: r["status"] for r in results["results"]} == dict.fromkeys(planners,
                                                                                    "fail")
    for planner in planners:
        assert ONLY_PLAIN in items[f"{ONE_STEP}[{planner}]"].text
    assert all({d["run"] for d in r["verdict"]["differences"]} == {PLAIN}
               for r in results["results"])
