"""The reference (conformance/engine/reference.py): the pure-Python planner's plan of launcher
arguments, and the benchmark's correctness check built on it."""

from __future__ import annotations

import torch

from conformance.corpus.loader import load_corpus
from conformance.engine.reference import plan_mismatch, reference_plan
from conformance.engine.steps import first_step
from conformance.corpus.corpus_subject import CASES_DIR as DEFAULT_CASES_DIR
from tests.planted import wrong_planners as wp

CASES = {case.id: case for case in load_corpus([DEFAULT_CASES_DIR / "spec"])[0]}


def test_reference_plan_is_spec_section_7():
    kwargs = first_step(CASES["spec7-prefill-and-decodes"], "cpu").kwargs
    before = {k: v.clone() for k, v in kwargs.items() if isinstance(v, torch.Tensor)}
    assert reference_plan(kwargs) == {
        "out_verify_offsets_scratch": [0, 0, 4, 14], "out_write_offsets": [0, 8, 9, 10],
        "out_write_seed_slot_indices": [-1, 35, 57], "out_verify_num_valid": 14,
        "out_verify_enable": 1, "out_write_num_valid_reqs": 3}
    assert all(torch.equal(kwargs[k], v) for k, v in before.items())  # nothing written


def test_plan_mismatch_passes_a_right_plan_and_names_a_wrong_one():
    kwargs = first_step(CASES["spec7-prefill-and-decodes"], "cpu").kwargs
    wp.off_by_one_scan(**kwargs)
    text = plan_mismatch(kwargs)
    assert text.startswith("out_write_offsets: 3 element(s) differ, first at index 0"), text
    wp.python_launch(**kwargs)
    assert plan_mismatch(kwargs) is None
