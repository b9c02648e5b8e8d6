"""Out-of-contract values are computed from a case's values (spec section 6), and the ``hazard``
tag must agree with them: impls/offsets_planner/harness/hazards.py and its use in the loader."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import pytest

from conformance.corpus.arrays import evaluate
from conformance.corpus.generators import DEFAULT_TABLE, build_table
from impls.offsets_planner.harness.hazards import OTHER_ROWS, ROWS, HazardTagWarning, out_of_contract
from conformance.corpus.loader import load_corpus

INT64_MIN = -(1 << 63)
LINEAR = {"generator": "linear", "max_reqs": 4, "max_seq_len": 16}


def _case(case_id: str, tags: list[str], **inputs) -> dict:
    """A launcher case that these tests load and never run: its golden has the lengths the loader
    checks (bs + 1, bs + 1, bs), not values anyone should trust."""
    bs = len(inputs.get("req_pool_indices", []))
    return {
        "id": case_id, "description": "d", "tags": tags,
        "source": {"kind": "project", "ref": "test"}, "golden_check": "hand: test",
        "inputs": {"req_to_token": LINEAR, **inputs},
        "expect": {"out_verify_offsets_scratch": [0] * (bs + 1),
                   "out_write_offsets": [0] * (bs + 1),
                   "out_write_seed_slot_indices": [-1] * bs, "out_verify_num_valid": 0,
                   "out_verify_enable": 1, "out_write_num_valid_reqs": bs},
    }


def _load(tmp_path: Path, *docs: dict):
    for k, doc in enumerate(docs):
        (tmp_path / f"c{k}.json").write_text(json.dumps(doc))
    return load_corpus([tmp_path])


ROW_CASES = {
    # name: (inputs, rows expected), each from spec section 6's table, read by hand
    "in-contract": (dict(req_pool_indices=[1, 0, 2], prefix_lens=[5, 99, 3],
                         extend_seq_lens=[1, 99, 1]), []),
    "padding-row-never-counts": (dict(req_pool_indices=[0], prefix_lens=[1 << 40],
                                      extend_seq_lens=[1]), []),
    "past-row": (dict(req_pool_indices=[1], prefix_lens=[17], extend_seq_lens=[1]), ["past-row"]),
    "last-position-is-in": (dict(req_pool_indices=[3], prefix_lens=[16], extend_seq_lens=[1]), []),
    "row-negative": (dict(req_pool_indices=[-1], prefix_lens=[1], extend_seq_lens=[0]),
                     ["row-out-of-table"]),
    "row-max-reqs": (dict(req_pool_indices=[4], prefix_lens=[1], extend_seq_lens=[1]),
                     ["row-out-of-table"]),
    "row-outside-without-prefix": (dict(req_pool_indices=[4], prefix_lens=[0],
                                        extend_seq_lens=[1]), []),
    "zero-extend-past-last-row": (dict(req_pool_indices=[3], prefix_lens=[17],
                                       extend_seq_lens=[0]), ["zero-extend-read"]),
    "zero-extend-next-row-is-in-bounds": (dict(req_pool_indices=[2], prefix_lens=[17],
                                               extend_seq_lens=[0]), []),
    "window-overflow": (dict(req_pool_indices=[1], prefix_lens=[INT64_MIN], extend_seq_lens=[0],
                             swa_window_size=1, lut={"generator": "identity", "len": 64}),
                        ["window-overflow"]),
    "window-at-int64-min-is-exact": (dict(req_pool_indices=[1], prefix_lens=[INT64_MIN + 1],
                                          extend_seq_lens=[0], swa_window_size=1,
                                          lut={"generator": "identity", "len": 64}), []),
    "lut-clamp": (dict(req_pool_indices=[1], prefix_lens=[3], extend_seq_lens=[1],
                       lut={"generator": "identity", "len": 18}), ["lut-clamp"]),
    "lut-just-long-enough": (dict(req_pool_indices=[1], prefix_lens=[3], extend_seq_lens=[1],
                                  lut={"generator": "identity", "len": 19}), []),
    "negative-slot-passes-the-lut": (dict(req_to_token=LINEAR | {"set": [[1, 2, -1]]},
                                          req_pool_indices=[1], prefix_lens=[3],
                                          extend_seq_lens=[1],
                                          lut={"generator": "identity", "len": 1}), []),
    "several-rows-in-spec-order": (dict(req_pool_indices=[9, 1], prefix_lens=[2, 40],
                                        extend_seq_lens=[1, 1],
                                        lut={"generator": "identity", "len": 2}),
                                   ["lut-clamp", "past-row", "row-out-of-table"]),
}


@pytest.mark.parametrize("name", ROW_CASES)
def test_each_row_of_section_6_is_computed_from_the_values(tmp_path: Path, name: str):
    inputs, want = ROW_CASES[name]
    tags = ["hazard"] if want else []
    cases, errors = _load(tmp_path, _case(name, tags, **inputs))
    assert errors == []
    assert cases[0].out_of_contract == tuple(want)
    assert out_of_contract(cases[0]) == want


def test_a_generated_table_and_step_changes_are_read(tmp_path: Path):
    """The slot that the LUT clamps comes from a permuted table, and from a step's
    req_to_token_set, not only from literal values."""
    permuted = {"generator": "permuted", "max_reqs": 4, "max_seq_len": 16, "seed": 7}
    table = build_table(permuted, "cpu")
    slot = int(table[2, 4])
    doc = _case("permuted-lut", ["hazard"], req_to_token=permuted, req_pool_indices=[2],
                prefix_lens=[5], extend_seq_lens=[1], lut={"generator": "identity", "len": slot})
    low = _case("permuted-lut-in", [], req_to_token=permuted, req_pool_indices=[2],
                prefix_lens=[5], extend_seq_lens=[1],
                lut={"generator": "identity", "len": slot + 1})
    stepped = _case("steps-patch", ["hazard"], lut={"generator": "identity", "len": 64})
    del stepped["expect"]
    one = {"req_pool_indices": [1], "prefix_lens": [3], "extend_seq_lens": [1]}
    golden = {"out_verify_offsets_scratch": [0, 3], "out_write_offsets": [0, 1],
              "out_write_seed_slot_indices": [18], "out_verify_num_valid": 3,
              "out_verify_enable": 1, "out_write_num_valid_reqs": 1}
    stepped["steps"] = [{"inputs": one, "expect": golden},
                        {"inputs": one | {"req_to_token_set": [[1, 2, 64]]}, "expect": golden}]
    cases, errors = _load(tmp_path, doc, low, stepped)
    assert errors == []
    got = {c.id: c.out_of_contract for c in cases}
    assert got == {"permuted-lut": ("lut-clamp",), "permuted-lut-in": (),
                   "steps-patch": ("lut-clamp",)}


def test_a_step_that_expects_an_error_reads_nothing(tmp_path: Path):
    doc = _case("err-past-row", [], req_pool_indices=[1], prefix_lens=[40], extend_seq_lens=[1])
    doc["overrides"] = [{"tensor": "prefix_lens", "dtype": "int32"}]
    message = "kv-canary: prefix_lens must have dtype torch.int64, got torch.int32"
    doc["expect"] = {"error": {"type": "ValueError", "id": "dtype", "message": message}}
    cases, errors = _load(tmp_path, doc)
    assert errors == [] and cases[0].out_of_contract == ()


def test_out_of_contract_values_without_the_tag_are_refused(tmp_path: Path):
    doc = _case("untagged", ["padding"], req_pool_indices=[0, 3], prefix_lens=[1, 20],
                extend_seq_lens=[1, 1])
    cases, errors = _load(tmp_path, doc)
    assert cases == []
    assert [str(e) for e in errors] == [
        f"{tmp_path / 'c0.json'}: at $.tags: values out of contract (spec §6: past-row; first at "
        f"$, request 1: prefix 20 - 1 >= max_seq_len 16) need the 'hazard' tag"]


def test_a_hazard_tag_that_no_row_of_section_6_explains_is_loaded_with_a_warning(tmp_path: Path):
    doc = _case("needless", ["hazard"], req_pool_indices=[1], prefix_lens=[3], extend_seq_lens=[1])
    past_bs = _case("past-bs", ["hazard"], req_pool_indices=[1], prefix_lens=[3],
                    extend_seq_lens=[1], write_req_capacity=2)
    with pytest.warns(HazardTagWarning) as caught:
        cases, errors = _load(tmp_path, doc, past_bs)
    assert errors == [] and [c.id for c in cases] == ["needless", "past-bs"]
    [warning] = caught  # the write offsets past bs are a row of §6: no warning for past-bs
    assert str(warning.message) == (
        "case 'needless' is tagged 'hazard', but it reaches no row of spec §6 "
        "(lut-clamp, past-row, row-out-of-table, window-overflow, zero-extend-read, "
        "write-offsets-past-bs); it runs isolated all the same")
    # located at the case file, on its id's line (the file is one line of JSON here)
    assert (warning.filename, warning.lineno) == (str(tmp_path / "c0.json"), 1)
    assert set(OTHER_ROWS) == {"write-offsets-past-bs"}


def test_the_shipped_corpus_loads_without_a_hazard_warning():
    with warnings.catch_warnings():
        warnings.simplefilter("error", HazardTagWarning)
        cases, errors = load_corpus()
    assert errors == [] and len(cases) > 200


def _independent_rows(case) -> set[str]:
    """Section 6's value rows restated with numpy on the BUILT table (generators.build_table),
    step changes applied in place: no code shared with hazards.py's lazy table reader."""
    table = build_table(case.inputs.get("req_to_token") or DEFAULT_TABLE, "cpu").numpy().copy()
    lut = case.inputs.get("lut")
    lut_n = None if lut is None else (len(lut["values"]) if lut["generator"] == "explicit"
                                      else lut["len"])
    rows, cols = table.shape
    found = set()
    for step in case.steps:
        for row, pos, value in step.inputs.get("req_to_token_set", ()):
            table[row, pos] = value
        if step.error is not None:
            continue
        rpi, prefix, extend = (np.array(evaluate(step.inputs.get(n, [])), dtype=object)
                               for n in ("req_pool_indices", "prefix_lens", "extend_seq_lens"))
        live = rpi != 0
        window = step.inputs.get("swa_window_size", 0)
        if window > 0 and any(live & (prefix - window < INT64_MIN)):
            found.add("window-overflow")
        reads = live & (prefix > 0)
        inside = (rpi >= 0) & (rpi < rows)
        if any(reads & ~inside):
            found.add("row-out-of-table")
        seeded = reads & inside & (extend > 0)
        if any(reads & inside & (extend <= 0) & (rpi * cols + prefix - 1 >= rows * cols)):
            found.add("zero-extend-read")
        if any(seeded & (prefix - 1 >= cols)):
            found.add("past-row")
        if lut_n is not None and cols:
            for r in np.nonzero(seeded.astype(bool))[0]:
                slot = int(table[int(rpi[r]), min(int(prefix[r]) - 1, cols - 1)])
                if slot >= lut_n:
                    found.add("lut-clamp")
    return found


def test_the_corpus_agrees_with_an_independent_reading_and_its_tags():
    cases, errors = load_corpus()
    assert errors == []
    checked = 0
    for case in cases:
        if case.entry != "launcher":
            assert case.out_of_contract == ()
            continue
        assert set(case.out_of_contract) == _independent_rows(case), case.id
        assert list(case.out_of_contract) == [r for r in ROWS if r in case.out_of_contract]
        if case.out_of_contract:
            assert "hazard" in case.tags, case.id
        checked += 1
    assert checked > 50
    by_id = {c.id: c for c in cases}
    assert by_id["random-decode-prefill-bs-33"].out_of_contract == ("past-row",)
    assert by_id["width-int64-min-prefix-small-window"].out_of_contract == ("window-overflow",)
    assert by_id["hazard-row-negative"].out_of_contract == ("row-out-of-table",)
    assert by_id["lut-clamp"].out_of_contract == ("lut-clamp",)
