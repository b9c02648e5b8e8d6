"""Two holes an adversarial review found, now closed: a planner that writes an input and puts it
back, and one that caches results keyed on its input tensors' identity."""

from __future__ import annotations

import pytest
import torch

from conformance.corpus.loader import load_corpus
from conformance.engine.runner import ConformanceFailure, Target, run_case
from impls.offsets_planner.python_planner import launch as reference

CASES = {case.id: case for case in load_corpus()[0]}
CPU = torch.device("cpu")


def mutates_then_restores(**kwargs) -> None:
    """Bug: clamps prefix_lens in place to plan, then writes the old values back."""
    prefix = kwargs["prefix_lens"]
    saved = prefix.clone()
    prefix.clamp_(min=0)
    reference(**kwargs)
    prefix.copy_(saved)


_CACHE: dict = {}


def caches_by_identity(**kwargs) -> None:
    """Bug: replays the outputs it computed the last time it saw these input tensor objects."""
    key = tuple(id(kwargs[n]) for n in ("req_pool_indices", "prefix_lens", "extend_seq_lens",
                                         "req_to_token"))
    outs = [n for n in kwargs if n.startswith("out_")]
    if key in _CACHE:
        for name, value in zip(outs, _CACHE[key]):
            kwargs[name].copy_(value)
        return
    reference(**kwargs)
    _CACHE[key] = [kwargs[n].clone() for n in outs]


def test_restored_input_is_still_a_write():
    case = CASES["spec7-decode-seed"]
    run_case(case, Target("python", reference, CPU))
    with pytest.raises(ConformanceFailure) as excinfo:
        run_case(case, Target("m", mutates_then_restores, CPU))
    assert "wrote to its input prefix_lens in place" in str(excinfo.value)


@pytest.mark.parametrize("case_id", ["steps-table-entry-changes", "steps-lut-entry-changes"])
def test_identity_cache_is_caught_when_table_or_lut_changes(case_id):
    _CACHE.clear()
    case = CASES[case_id]
    run_case(case, Target("python", reference, CPU))
    with pytest.raises(ConformanceFailure) as excinfo:
        run_case(case, Target("c", caches_by_identity, CPU))
    text = str(excinfo.value)
    assert "step 2 of 3" in text and "out_write_seed_slot_indices" in text


def test_same_bs_steps_reuse_the_same_input_tensors():
    seen = []

    def spy(**kwargs):
        seen.append(id(kwargs["prefix_lens"]))
        reference(**kwargs)

    run_case(CASES["steps-table-entry-changes"], Target("spy", spy, CPU))
    # three runs of three steps (poison a, poison b, plain): each poisoned run's steps share one
    # tensor, written in place as a graph replay's; the plain run hands a new tensor every step
    # (conformance/engine/plain.py), as a server without a graph does
    assert len(seen) == 9 and all(len(set(seen[i:i + 3])) == 1 for i in (0, 3))
