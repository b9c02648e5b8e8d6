"""Every golden in the corpus agrees with the independent numpy oracle (tests/oracle.py).

This is what makes a recorded golden evidence: it came from the pure-Python planner, and a second
reading of the spec, sharing no code with it, reproduces it.
"""

from __future__ import annotations

from itertools import islice

import pytest

from conformance.corpus.arrays import evaluate
from conformance.corpus.loader import load_corpus
from conformance.engine.steps import CaseInputs, RUNS
from impls.offsets_planner.contract import LUT_NAME
from tests.oracle import oracle

CASES, _ = load_corpus()
VALID_STEPS = [
    pytest.param(case, k, id=f"{case.id}-step{k}")
    for case in CASES if case.entry == "launcher"
    for k, step in enumerate(case.steps) if step.error is None and not step.overrides
]


def test_corpus_has_goldens_to_check():
    assert len(VALID_STEPS) >= 60


@pytest.mark.parametrize(("case", "k"), VALID_STEPS)
def test_golden_matches_oracle(case, k):
    step = case.steps[k]
    # the runner's step builder: table / LUT changes of steps 0..k applied, as when the case runs
    # (the tensors are shared by all steps, so stop at step k)
    built = next(islice(CaseInputs(case, "cpu").steps(runs=RUNS[:1], goldens=False), k, None))
    table, lut = built.kwargs["req_to_token"], built.kwargs[LUT_NAME]
    got = oracle(
        evaluate(step.inputs["req_pool_indices"]),
        evaluate(step.inputs["prefix_lens"]),
        evaluate(step.inputs["extend_seq_lens"]),
        table.numpy(),
        None if lut is None else lut.numpy(),
        step.inputs.get("swa_window_size", 0),
        step.inputs.get("verify_capacity", 1 << 20),
    )
    want = {name: (value if isinstance(value, int) else evaluate(value))
            for name, value in step.expect.items()}
    assert want == got
