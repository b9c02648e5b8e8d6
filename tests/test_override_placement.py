"""Overrides only on a step that expects an error (cases/offsets-planner/README.md, *Overrides*):
the golden and each element's rule (spec §8) are read from a step's inputs as written, before
overrides, so the loader refuses an override on a step that expects outputs, naming the case,
the step and the override; an entrant's own case folder cannot use one to be judged on values
its planner was not given."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import numpy as np

from conformance.corpus.case_file import MAX_MESSAGE
from conformance.corpus.loader import load_corpus
from tests.case_docs import case_doc, load_files
from tests.oracle import oracle
from tests.subproc import run_pytest

SWAP = {"swap": ["prefix_lens", "extend_seq_lens"]}
DTYPE_ERROR = {"error": {"type": "ValueError", "id": "dtype", "message":
                         "kv-canary: prefix_lens must have dtype torch.int64, got torch.int32"}}
WHY = ("on a step that expects outputs: its golden and element rules (spec §8) read the inputs "
       "as written, not the planner's; expect its error, or drop it "
       "(cases/offsets-planner/README.md, Overrides)")


def _three_steps(case_id: str, middle: dict) -> dict:
    """case_doc's decode, then ``middle`` (a step's extra keys) on the same inputs, then the decode
    again: the shape of cases/offsets-planner/errors/multi-step.json."""
    doc = case_doc(case_id, tags=["steps"])
    golden = doc.pop("expect")
    doc["steps"] = [{"expect": golden}, {"expect": golden, **middle}, {"expect": golden}]
    return doc


def test_a_swap_on_a_case_that_expects_outputs_is_a_load_fault(tmp_path: Path):
    cases, errors = load_files(tmp_path, {"swap.json": case_doc("own-swap", overrides=[SWAP])})
    assert cases == []
    [error] = errors
    assert (error.case_id, error.json_path) == ("own-swap", "$.overrides[0]")
    assert error.message == (
        "case 'own-swap': override {\"swap\":[\"prefix_lens\",\"extend_seq_lens\"]} " + WHY)
    assert str(error) == f"{tmp_path / 'swap.json'}: at $.overrides[0]: {error.message}"


def test_a_shape_on_a_valid_step_between_valid_steps_is_a_load_fault(tmp_path: Path):
    shape = {"tensor": "prefix_lens", "shape": [1]}  # zeros: prefix 0 where the file says 7
    doc = _three_steps("own-shape", {"overrides": [shape]})
    cases, errors = load_files(tmp_path, {"shape.json": doc})
    assert cases == []
    [error] = errors
    assert (error.case_id, error.json_path) == ("own-shape", "$.steps[1].overrides[0]")
    assert error.message == (
        "case 'own-shape' step 1: override {\"tensor\":\"prefix_lens\",\"shape\":[1]} " + WHY)


def test_the_first_override_is_named_and_a_long_shape_is_cut(tmp_path: Path):
    doc = case_doc("own-long", overrides=[{"tensor": "prefix_lens", "shape": [1] * 40}, SWAP])
    [error] = load_files(tmp_path, {"long.json": doc})[1]
    assert error.json_path == "$.overrides[0]"
    assert error.message == (
        "case 'own-long': override {\"tensor\":\"prefix_lens\",\"shape\":[1,1,1,1,1,1,1,1,1,1,1,1,"
        "1,1,1,1,1,1,1,1... " + WHY)  # 72 characters of the override, then "..."


def test_overrides_beside_steps_are_refused(tmp_path: Path):
    """A case with steps applies only each step's own overrides; its case-level ones would
    apply to no step."""
    doc = _three_steps("own-beside", {})
    doc["steps"][1]["expect"] = DTYPE_ERROR
    doc["overrides"] = [{"tensor": "prefix_lens", "dtype": "int32"}]
    [error] = load_files(tmp_path, {"beside.json": doc})[1]
    assert (error.case_id, error.json_path, error.message) == (
        "own-beside", "$.overrides", "a case with steps never applies overrides beside them: give "
        "the step that expects the error its own ($.steps[k].overrides)")


def test_overrides_on_error_steps_still_load(tmp_path: Path):
    between = _three_steps("own-between", {
        "overrides": [{"tensor": "prefix_lens", "dtype": "int32"}], "expect": DTYPE_ERROR})
    swapped = case_doc("own-swapped-outputs", overrides=[
        {"swap": ["out_write_offsets", "out_write_seed_slot_indices"]}], expect={"error": {
            "type": "ValueError", "id": "write-offsets-len-mismatch",
            "message": "kv-canary: write_offsets_len must equal write_req_capacity + 1, got 1 "
                       "and 2"}})  # the seed buffer (1) as the offsets, the offsets (2) as seeds
    cases, errors = load_files(tmp_path, {"a.json": between, "b.json": swapped})
    assert [str(e) for e in errors] == []
    by_id = {c.id: c for c in cases}
    assert [s.overrides for s in by_id["own-between"].steps] == [
        [], [{"tensor": "prefix_lens", "dtype": "int32"}], []]
    assert by_id["own-swapped-outputs"].steps[0].overrides == [
        {"swap": ["out_write_offsets", "out_write_seed_slot_indices"]}]


def test_every_override_of_the_corpus_is_on_a_step_that_expects_an_error():
    cases, errors = load_corpus()
    assert errors == []
    placed = [(c.id, k, step.error is not None) for c in cases for k, step in enumerate(c.steps)
              if step.overrides]
    assert len(placed) == 91 and all(expects_error for _, _, expects_error in placed)
    assert ("err-steps-dtype-between-valid", 1, True) in placed  # between two valid steps


def _golden(rpi, prefix, extend) -> dict:
    table = np.arange(4 * 16, dtype=np.int64).reshape(4, 16)  # case_doc's linear 4 x 16 table
    return oracle(rpi, prefix, extend, table, None, 0, 1 << 20)


def test_an_entrants_folder_cannot_judge_a_planner_on_swapped_values(tmp_path: Path):
    """The attack: a case in the entrant's own folder whose golden is what a planner would give
    on the swapped values (prefix 1, extend 7), not on the values as written (prefix 7, extend
    1). The run refuses it at load, before any planner runs, and fails."""
    written, seen = _golden([2], [7], [1]), _golden([2], [1], [7])
    assert written["out_write_seed_slot_indices"] == [38]
    assert seen["out_write_seed_slot_indices"] == [32] and seen["out_write_offsets"] == [0, 7]
    doc = case_doc("own-attack", overrides=[SWAP], expect=seen)
    folder = tmp_path / "mine"
    folder.mkdir()
    (folder / "attack.json").write_text(json.dumps(doc))
    honest = copy.deepcopy(doc)
    del honest["overrides"]
    honest["expect"] = written  # the same case without the swap loads: its golden is right
    assert load_files(tmp_path / "honest", {"h.json": honest})[1] == []
    proc, items = run_pytest(tmp_path, "--planner", "python", "--extra-cases", str(folder),
                             "--case", "own-attack")
    assert proc.returncode == 1, proc.stdout[-3000:]
    name = f"{folder / 'attack.json'}@$.overrides[0][load]"
    assert list(items) == [name] and items[name].outcome == "failed"
    assert (f"bad case file: {folder / 'attack.json'}: at $.overrides[0]: case 'own-attack': "
            f"override {{\"swap\":[\"prefix_lens\",\"extend_seq_lens\"]}} {WHY}\n") in proc.stdout
    assert "own-attack[python]" not in proc.stdout


def test_the_longest_id_and_override_keep_the_whole_message(tmp_path: Path):
    """A 100-character id (the schema's longest) at step 12 with a cut shape: the message is
    printed whole (no cut at MAX_MESSAGE), the README pointer included."""
    case_id = "a" * 100
    shape = {"tensor": "out_write_seed_slot_indices", "shape": [1] * 40}
    valid = {"expect": case_doc(case_id)["expect"]}
    doc = case_doc(case_id, tags=["steps"])
    doc["steps"] = [dict(valid) for _ in range(12)] + [{**valid, "overrides": [shape]}]
    del doc["expect"]
    [error] = load_files(tmp_path, {"long-id.json": doc})[1]
    assert error.json_path == "$.steps[12].overrides[0]"
    assert len(error.message) <= MAX_MESSAGE, len(error.message)
    assert error.message.startswith(f"case '{case_id}' step 12: override ")
    assert error.message.endswith(WHY)
    assert str(error).endswith("(cases/offsets-planner/README.md, Overrides)")
