"""Observe, then judge (conformance/engine/observe.py, judge.py): an observation is plain data that
survives JSON, and judging it gives exactly the verdict of run_case."""

from __future__ import annotations

import json

import pytest
import torch

from conformance.corpus.loader import load_corpus
from conformance.engine.inputs import GUARD
from conformance.engine.judge import ConformanceFailure, judge
from conformance.engine.observe import Observation, observe
from conformance.engine.runner import Target, run_case
from conformance.corpus.corpus_subject import CASES_DIR as DEFAULT_CASES_DIR
from impls.offsets_planner.python_planner import launch as python_launch
from tests.planted import wrong_planners as wp


CPU = torch.device("cpu")
CASES = {case.id: case for case in load_corpus([DEFAULT_CASES_DIR])[0]}


def _roundtrip(seen: Observation) -> Observation:
    text = seen.to_json()
    json.loads(text)  # plain JSON
    return Observation.from_json(text)


def test_observation_records_every_call_and_survives_json():
    case = CASES["spec7-prefill-and-decodes"]
    seen = observe(case, Target("python", python_launch, CPU))
    assert [(s.run, s.index) for s in seen.steps] == [("a", 0), ("b", 0), ("plain", 0)]
    assert [s.guard for s in seen.steps] == [GUARD, GUARD, 0]  # the plain run: no guard zones
    assert seen.steps[2].outputs_after["out_write_offsets"] == [0, 8, 9, 10]
    first = seen.steps[0]
    assert first.raised is None and first.returned_none and first.returned_repr == "None"
    scratch = first.outputs_after["out_write_offsets"]
    assert scratch[GUARD:GUARD + 4] == [0, 8, 9, 10]  # spec section 7
    assert len(scratch) == 4 + 2 * GUARD
    assert first.outputs_before["out_write_offsets"][GUARD] != 0  # poison before the launch
    names = [state.name for state in first.inputs]
    assert names[0] == "lut_tensor (the no-LUT stand-in)" and "prefix_lens" in names
    assert not any(state.changed for state in first.inputs)
    assert _roundtrip(seen) == seen
    judge(case, _roundtrip(seen), "python", CPU)


@pytest.mark.parametrize(("name", "case_id"), [
    ("off_by_one_scan", "spec7-prefill-and-decodes"),
    ("modifies_input", "spec7-prefill-and-decodes"),
    ("wrong_error_type", "err-dtype-prefix-lens"),
    ("raises_lookalike_value_error", "err-dtype-prefix-lens"),
    ("returns_a_value", "spec7-prefill-and-decodes"),
])
def test_judging_a_json_observation_gives_run_cases_text(name, case_id):
    case = CASES[case_id]
    target = Target(f"tests.planted.wrong_planners:{name}", getattr(wp, name), CPU)
    with pytest.raises(ConformanceFailure) as direct:
        run_case(case, target)
    with pytest.raises(ConformanceFailure) as judged:
        judge(case, _roundtrip(observe(case, target)), target.name, CPU)
    assert str(judged.value) == str(direct.value)


def test_raised_records_subclass_not_name():
    case = CASES["err-dtype-prefix-lens"]
    lookalike = observe(case, Target("x", wp.raises_lookalike_value_error, CPU)).steps[0].raised
    real = observe(case, Target("python", python_launch, CPU)).steps[0].raised
    assert (lookalike.class_name, lookalike.is_value_error) == ("ValueError", False)
    assert "ValueError" not in lookalike.builtin_bases and "Exception" in lookalike.builtin_bases
    assert (real.class_name, real.is_value_error, real.error_id) == ("PlanError", True, "dtype")
    assert "ValueError" in real.builtin_bases


def test_an_incomplete_observation_is_never_a_pass():
    case = CASES["spec7-prefill-and-decodes"]
    seen = observe(case, Target("python", python_launch, CPU))
    seen.steps = seen.steps[:1]
    with pytest.raises(ConformanceFailure, match="the observation holds 1 of 3 calls"):
        judge(case, seen, "python", CPU)


def test_a_large_return_value_is_recorded_short():
    def returns_a_long_list(**kwargs):
        python_launch(**kwargs)
        return list(range(10_000))

    seen = observe(CASES["spec7-prefill-and-decodes"], Target("x", returns_a_long_list, CPU))
    first = seen.steps[0]
    assert not first.returned_none and first.returned_repr.startswith("[0, 1, 2, 3,")
    assert len(first.returned_repr) <= 200 and first.returned_repr.endswith("...")
