"""Hostile planners (``tests/planted/hostile_planners.py``): each is caught by the harness.

* a planner that skips work on a repeated input is caught by the runner's second run on fresh poison;
* one that replays the previous call's outputs for the same buffers, bs and scalars passed every
  case of the corpus; ``cases/offsets-planner/semantics/steps-same-shape.json`` (consecutive
  decode steps: same bs, new values) was added for it and is the one case that catches it;
* ones that write to their inputs are caught by the input snapshots (garbage tails included);
* one that works only when inputs were written on the default stream is caught by
  :func:`conformance.robustness.stream_check.busy_stream_divergence` (GPU only).
"""

from __future__ import annotations

import pytest
import torch

from conformance.corpus.loader import load_corpus
from conformance.engine.runner import ConformanceFailure, Target, resolve_device, run_case
from conformance.robustness.stream_check import StreamCheckUnavailable, busy_stream_divergence
from tests.planted import hostile_planners as hp

CPU = resolve_device("cpu")
CASES = {case.id: case for case in load_corpus()[0]}
NEEDS_CUDA = pytest.mark.skipif(not torch.cuda.is_available(),
                                reason="the stream check needs a CUDA device (torch sees none)")


def _failure(case_id: str, planner, device=CPU) -> str:
    with pytest.raises(ConformanceFailure) as info:
        run_case(CASES[case_id], Target("hostile", planner, device))
    return str(info.value)


def test_skips_when_cached_is_caught_by_second_run_on_fresh_poison():
    text = _failure("spec7-prefill-and-decodes", hp.SkipsWhenCached())
    assert "run 2 of 2 (fresh poison 'b')" in text
    assert "out_verify_offsets_scratch: 4 element(s) differ, first at index 0" in text


def test_replays_by_shape_passes_the_old_corpus_and_is_caught_by_the_same_shape_steps():
    failed = {}
    for case in CASES.values():
        if case.entry != "launcher":
            continue
        try:  # a fresh cache per case, as if each case ran in its own process
            run_case(case, Target("hostile", hp.ReplaysByShape(), CPU))
        except ConformanceFailure as exc:
            failed[case.id] = str(exc)
    # Before steps-same-shape.json was added no case caught it; now that case does, and only
    # multi-step cases can (a single launch never hits the cache it fills).
    assert "steps-same-shape-decodes" in failed
    assert all(len(CASES[case_id].steps) > 1 for case_id in failed)
    text = failed["steps-same-shape-decodes"]
    assert "step 2 of 3, run 1 of 2" in text
    assert "out_verify_offsets_scratch: 3 element(s) differ, first at index 1" in text


def test_scribbles_on_table_is_caught():
    text = _failure("spec7-padding-row-middle", hp.scribbles_on_table)
    assert "modified its input (inputs are read-only, spec §5)" in text
    assert "req_to_token: 1 element(s) differ" in text
    assert "[0]" in text and "[-1]" in text  # expected 0 (the dummy slot), got -1


def test_writes_input_tail_is_caught():
    text = _failure("spec7-prefill-and-decodes", hp.writes_input_tail)
    assert "modified its input" in text
    assert "prefix_lens: 1 element(s) differ, first at index 3" in text  # bs 3: the tail's first


def test_private_stream_is_the_python_planner_on_cpu_and_the_check_refuses_cpu():
    # Without CUDA there are no streams to race on: the hostile planner is right here, and the
    # stream check says plainly that it cannot run (the GPU test below is the real check).
    run_case(CASES["spec7-prefill-and-decodes"], Target("hostile", hp.private_stream, CPU))
    with pytest.raises(StreamCheckUnavailable, match="needs a CUDA device, hostile runs on cpu"):
        busy_stream_divergence(CASES["spec7-prefill-and-decodes"],
                               Target("hostile", hp.private_stream, CPU))


@NEEDS_CUDA
def test_private_stream_is_caught_on_a_busy_side_stream():
    cuda = resolve_device("cuda")
    text = busy_stream_divergence(CASES["spec7-prefill-and-decodes"],
                                  Target("hostile", hp.private_stream, cuda))
    # spec7-prefill-and-decodes: verify offsets [0, 0, 4, 14]; the private stream read all-padding
    assert text is not None and text.startswith("out_verify_offsets_scratch[2]: expected 4, got 0")


@NEEDS_CUDA
@pytest.mark.parametrize("name", ["python", "triton", "numba-cuda"])
def test_builtin_planners_wait_on_the_current_stream(name):
    from impls.offsets_planner.registry import availability, get_planner

    if availability(name).device != "cuda":
        pytest.skip(f"{name} does not run on CUDA here")
    target = Target(name, get_planner(name), resolve_device("cuda"))
    assert busy_stream_divergence(CASES["spec7-prefill-and-decodes"], target) is None
