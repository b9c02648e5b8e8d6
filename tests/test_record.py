"""``python -m conformance record``: the goldens it prints are the committed ones for every
multi-step case of the corpus (each step built by the runner's step builder, so a step's
req_to_token_set / lut_set applies), and ``--write`` writes them into the case file."""

from __future__ import annotations

import json
import shutil

import pytest

from conformance import cli
from conformance.corpus.arrays import evaluate
from conformance.corpus.case_model import make_case
from conformance.corpus.loader import load_corpus
from conformance.engine.reference import record_expectations
from conformance.corpus.corpus_subject import CASES_DIR as DEFAULT_CASES_DIR
from conformance.record import UNCHECKED, write_expectations

CASES, _ = load_corpus()
MULTI_STEP = [case for case in CASES if case.entry == "launcher" and len(case.steps) > 1]


def _committed(step) -> dict:
    """A step's committed golden with array specs evaluated (record prints plain lists)."""
    if step.error is not None:
        return {"error": step.error}
    return {name: value if isinstance(value, int) else evaluate(value)
            for name, value in step.expect.items()}


def test_corpus_has_multi_step_cases():
    assert len(MULTI_STEP) >= 8
    assert any(c.id == "steps-table-entry-changes" for c in MULTI_STEP)


@pytest.mark.parametrize("case", MULTI_STEP, ids=[c.id for c in MULTI_STEP])
def test_record_reproduces_the_committed_goldens(case):
    assert record_expectations(case) == [_committed(step) for step in case.steps]


def test_record_command_prints_the_table_change_seeds(capsys):
    """Steps 2 and 3 of steps-table-entry-changes change req_to_token[1, 2] to 500, then -9."""
    assert cli.main(["record", "steps-table-entry-changes"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert [step["out_write_seed_slot_indices"] for step in printed] == [[18], [500], [-9]]


def test_record_write_into_a_copy(tmp_path, capsys):
    """--write stores every step's golden into the (copied) case file; loading it again gives the
    same goldens. Runs on a temporary copy of the corpus, never on cases/offsets-planner/ itself."""
    source = next(c for c in MULTI_STEP if c.id == "steps-table-entry-changes")
    copy = tmp_path / "cases"
    shutil.copytree(DEFAULT_CASES_DIR, copy)
    target = copy / source.path.relative_to(DEFAULT_CASES_DIR)
    doc = json.loads(target.read_text())
    raw = next(c for c in doc["cases"] if c["id"] == source.id) if "cases" in doc else doc
    for step in raw["steps"]:  # a wrong golden that --write must replace
        step["expect"]["out_write_seed_slot_indices"] = [0]
    target.write_text(json.dumps(doc))
    before = {p: p.read_text() for p in copy.rglob("*.json") if p != target}

    assert cli.main(["--cases", str(copy), "record", source.id, "--write"]) == 0
    assert f"wrote 3 golden(s) into {target} ({source.id}), marked needs_review" in \
        capsys.readouterr().out
    (reloaded,) = [c for c in load_corpus([copy])[0] if c.id == source.id]
    assert [_committed(s) for s in reloaded.steps] == [_committed(s) for s in source.steps]
    # the old note described the wrong golden: replaced, and the case waits for a review
    assert reloaded.golden_check == UNCHECKED and reloaded.needs_review
    assert source.golden_check != UNCHECKED and not source.needs_review
    assert {p: p.read_text() for p in before} == before  # no other file touched
    written = target.read_text()
    assert cli.main(["--cases", str(copy), "record", source.id, "--write"]) == 0
    assert "already holds these 3 golden(s): left as it is" in capsys.readouterr().out
    assert target.read_text() == written


def test_record_write_marks_a_golden_unchecked(tmp_path):
    """A case without golden_check gets the UNCHECKED note, so nobody mistakes it for evidence."""
    source = next(c for c in MULTI_STEP if c.id == "steps-table-entry-changes")
    (tmp_path / "one.json").write_text(json.dumps(source.raw))
    (case,), errors = load_corpus([tmp_path])
    assert errors == []
    doc = json.loads(case.path.read_text())
    del doc["golden_check"]
    case.path.write_text(json.dumps(doc))
    expectations = record_expectations(case)
    expectations[0] = {**expectations[0], "out_verify_enable": 1 - expectations[0]["out_verify_enable"]}
    assert write_expectations(case, expectations)  # a golden that changed
    doc = json.loads(case.path.read_text())
    assert doc["golden_check"] == UNCHECKED and doc["needs_review"] is True


def _table_entry_outside(tmp_path):
    """(source case, its copy at ``tmp_path``/bad.json whose step 2 sets an entry outside the
    4 x 16 table, the copy's dict)."""
    source = next(c for c in MULTI_STEP if c.id == "steps-table-entry-changes")
    raw = json.loads(json.dumps(source.raw))
    raw["steps"][1]["inputs"]["req_to_token_set"] = [[99, 0, 5]]
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(raw))
    return source, path, raw


def test_record_of_a_case_that_cannot_be_built_is_one_line(tmp_path, capsys, monkeypatch):
    """A table entry changed outside the table, in a Case built without the load-time checks (the
    engine's safety net): one line naming the file and the JSON path, exit 1, nothing written."""
    source, path, raw = _table_entry_outside(tmp_path)
    before = path.read_text()
    monkeypatch.setattr(cli, "load_corpus", lambda dirs=None: ([make_case(raw, path, "$")], []))
    code = cli.main(["--cases", str(tmp_path), "record", source.id, "--write"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 1 and len(err) == 1, err
    assert err[0] == (f"error: {source.id}: {path}: at $.steps[1].inputs: cannot build the inputs: "
                      f"IndexError: index 99 is out of bounds for dimension 0 with size 4"), err
    assert path.read_text() == before


def test_record_of_a_case_the_loader_refuses_names_the_fault(tmp_path, capsys):
    """The same case through the loader: refused at load time, the fault printed as one line
    naming the file and the JSON path first, a non-zero exit, nothing written."""
    source, path, _ = _table_entry_outside(tmp_path)
    before = path.read_text()
    code = cli.main(["--cases", str(tmp_path), "record", source.id, "--write"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 1 and len(err) == 1, err  # the fault alone, not "no such case id" too
    assert err[0] == (f"error: {path}: at $.steps[1].inputs.req_to_token_set[0]: [99, 0] is "
                      f"outside the 4 x 16 table"), err
    assert path.read_text() == before


_NEW = {"id": "my-new-case", "description": "a new case.", "tags": [],
        "source": {"kind": "project", "ref": "mine"}, "golden_check": "recorded",
        "inputs": {"req_to_token": {"generator": "linear", "max_reqs": 4, "max_seq_len": 16},
                   "lut": None, "req_pool_indices": [1, 2], "prefix_lens": [3, 4],
                   "extend_seq_lens": [1, 1]}}
# By hand (spec section 5): verify = prefix 3, 4; write = extend 1, 1; seeds = table[1, 2] = 18
# and table[2, 3] = 35 in the linear 4 x 16 table.
_NEW_GOLDEN = {"out_verify_offsets_scratch": [0, 3, 7], "out_write_offsets": [0, 1, 2],
               "out_write_seed_slot_indices": [18, 35], "out_verify_num_valid": 7,
               "out_verify_enable": 1, "out_write_num_valid_reqs": 2}


def test_record_writes_the_goldens_of_a_new_case_written_without_them(tmp_path, capsys):
    """A new case with no ``expect`` (the loader's only fault) is recorded, not refused: record
    prints its golden, ``--write`` writes it (marked unchecked) and the file then loads."""
    path = tmp_path / "new.json"
    path.write_text(json.dumps(_NEW))
    assert cli.main(["--cases", str(tmp_path), "record", "my-new-case"]) == 0
    assert json.loads(capsys.readouterr().out) == _NEW_GOLDEN
    assert cli.main(["--cases", str(tmp_path), "record", "my-new-case", "--write"]) == 0
    written = json.loads(path.read_text())
    assert written["expect"] == _NEW_GOLDEN and written["golden_check"] == UNCHECKED
    assert written["needs_review"] is True
    cases, errors = load_corpus([tmp_path])
    assert errors == [] and [c.id for c in cases] == ["my-new-case"]


def test_record_replaces_a_golden_of_the_wrong_length_in_a_step(tmp_path, capsys):
    """A two-step case whose second golden has the wrong length: record writes both steps."""
    doc = {k: v for k, v in _NEW.items() if k != "inputs"}
    doc["inputs"] = {k: v for k, v in _NEW["inputs"].items() if k == "req_to_token" or k == "lut"}
    step = {k: v for k, v in _NEW["inputs"].items() if k not in doc["inputs"]}
    doc["steps"] = [{"inputs": step, "expect": _NEW_GOLDEN},
                    {"inputs": step, "expect": {**_NEW_GOLDEN, "out_write_offsets": [0, 1]}}]
    path = tmp_path / "steps.json"
    path.write_text(json.dumps(doc))
    assert cli.main(["--cases", str(tmp_path), "record", "my-new-case", "--write"]) == 0
    assert [s["expect"] for s in json.loads(path.read_text())["steps"]] == [_NEW_GOLDEN] * 2


def test_record_of_a_new_case_with_another_fault_names_that_fault(tmp_path, capsys):
    """Recording replaces goldens only: a new case that also has an undeclared tag is refused,
    with the tag's fault, exit 1, nothing written."""
    path = tmp_path / "new.json"
    path.write_text(json.dumps({**_NEW, "tags": ["no-such-tag"]}))
    before = path.read_text()
    assert cli.main(["--cases", str(tmp_path), "record", "my-new-case", "--write"]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"error: {path}: at $.tags[0]: "), err
    assert "expect" not in err[0] and path.read_text() == before
