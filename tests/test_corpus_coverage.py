"""The corpus covers what a conformance corpus must: every catalog id, reached the way the catalog
says, and the batch sizes, hazards and tags listed there."""

from __future__ import annotations

from conformance.corpus.arrays import spec_len
from conformance.corpus.loader import load_corpus
from impls.offsets_planner.errors import CATALOG

CASES, FAULTS = load_corpus()
ENTRY_OF_REACH = {"launcher": "launcher", "validator": "validator", "allocate": "allocate"}


def _expected_ids(entry: str | None = None) -> set[str]:
    return {step.error["id"] for case in CASES if entry in (None, case.entry)
            for step in case.steps if step.error}


def test_corpus_loads_without_faults():
    assert FAULTS == []
    assert len(CASES) >= 200


def test_every_catalog_id_has_a_case_reaching_it_as_the_catalog_says():
    for error_id, entry in CATALOG.items():
        assert error_id in _expected_ids(ENTRY_OF_REACH[entry.reach]), error_id


def test_launcher_reaches_every_check_it_can():
    launcher_ids = _expected_ids("launcher")
    assert {e.id for e in CATALOG.values() if e.reach == "launcher"} <= launcher_ids


def test_edge_batch_sizes_are_present():  # empty, one, warp and block edges, PLAN_BS_BLOCK_SIZE +- 1
    sizes = {step.bs for case in CASES if case.entry == "launcher" for step in case.steps}
    assert {0, 1, 31, 32, 33, 1025, 4095, 4096, 4097} <= sizes


def test_required_tags_are_present():
    tags = {tag for case in CASES for tag in case.tags}
    assert {"documented-error", "hazard", "padding", "swa", "capacity", "boundary", "order",
            "steps", "lut", "int64", "negative", "spec-example"} <= tags


def test_every_spec_section_7_example_is_a_case():
    ids = {case.id for case in CASES}
    assert {"spec7-no-prefix", "spec7-decode-seed", "spec7-prefill-and-decodes",
            "spec7-padding-row-middle", "spec7-padding-rows-tail", "spec7-verify-only",
            "spec7-capacity-under", "spec7-capacity-exact", "spec7-lut-shift",
            "spec7-swa-window-totals"} <= ids


def test_every_case_says_how_its_golden_was_checked():
    unchecked = [c.id for c in CASES if "NOT yet checked" in c.golden_check and not c.needs_review]
    assert unchecked == []


def test_goldens_cover_every_defined_region():
    for case in CASES:
        for step in case.steps:
            if step.error is None and case.entry == "launcher":
                bs = step.bs
                assert spec_len(step.expect["out_verify_offsets_scratch"]) == bs + 1, case.id
                assert spec_len(step.expect["out_write_seed_slot_indices"]) == bs, case.id
