"""The case loader (conformance/corpus/loader.py): group defaults, faults that name the file and
the JSON path, duplicates, and unique node ids for load faults."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from conformance.corpus.case_file import CaseFileError
from conformance.corpus.loader import load_corpus
from conformance.paths import REPO_ROOT
from conformance.corpus.corpus_subject import CASES_DIR as DEFAULT_CASES_DIR
from tests.case_docs import case_doc, load_files


# ---------------------------------------------------------------------------------------------
# The case loader


def test_loader_group_defaults_and_order(tmp_path):
    group = {"group": "g", "defaults": {"tags": ["capacity"], "golden_check": "default check",
                                        "inputs": {"verify_capacity": 3}},
             "cases": [case_doc("g-one", tags=["capacity", "int64"]),
                       {k: v for k, v in case_doc("g-two").items() if k != "golden_check"}]}
    cases, errors = load_files(tmp_path, {"b/group.json": group, "a/single.json": case_doc("single"),
                                     "schema.json": "{not even json"})
    assert errors == []  # schema.json is never loaded as a case
    assert [c.id for c in cases] == ["single", "g-one", "g-two"]
    single, one, two = cases
    assert (single.json_path, one.json_path, two.json_path) == ("$", "$.cases[0]", "$.cases[1]")
    assert one.tags == ("capacity", "int64") and two.tags == ("capacity", "boundary")
    assert one.golden_check == "hand" and two.golden_check == "default check"
    assert two.inputs["verify_capacity"] == 3 and two.inputs["prefix_lens"] == [7]
    assert two.write_req_capacity == 1 and single.entry == "launcher"
    assert two.location.endswith("group.json $.cases[1]")
    assert single.location.endswith("single.json")


@pytest.mark.parametrize(("doc", "json_path", "message"), [
    ('{"id": "x",\n "tags": [}', "line 2 column 11", "malformed JSON: Expecting value"),
    (case_doc("x", source={"kind": "rumour", "ref": "r"}), "$.source.kind", "'rumour' is not one of"),
    (case_doc("X-upper"), "$.id", "does not match"),
    (case_doc("x", expect={"out_verify_offsets_scratch": [0], "out_write_offsets": [0, 1],
                            "out_write_seed_slot_indices": [38], "out_verify_num_valid": 7,
                            "out_verify_enable": 1, "out_write_num_valid_reqs": 1}),
     "$.expect.out_verify_offsets_scratch", "golden has 1 value, bs=1 needs 2"),
    (case_doc("x", expect={"out_verify_offsets_scratch": [0, 0, 1], "out_write_offsets": [0, 1],
                            "out_write_seed_slot_indices": [38], "out_verify_num_valid": 7,
                            "out_verify_enable": 1, "out_write_num_valid_reqs": 1}),
     "$.expect.out_verify_offsets_scratch", "golden has 3 values, bs=1 needs 2"),
    (case_doc("x", expect={"error": {"type": "ValueError", "id": "no-such-id", "message": "m"}}),
     "$.expect.error.id", "unknown catalog id 'no-such-id'"),
    (case_doc("x", expect={"error": {"type": "ValueError", "id": "bs-range",
                                      "message": "kv-canary: prefix_lens must be contiguous"}}),
     "$.expect.error.message", "it matches 'contiguous'"),
])
def test_loader_faults_name_file_and_path(tmp_path, doc, json_path, message):
    good = case_doc("good")
    cases, errors = load_files(tmp_path, {"bad.json": doc, "good.json": good})
    assert [c.id for c in cases] == ["good"]  # the good case still loads
    (error,) = errors
    assert isinstance(error, CaseFileError) and error.path == tmp_path / "bad.json"
    assert error.json_path == json_path, error
    assert message in error.message, error
    assert str(error).startswith(f"{tmp_path / 'bad.json'}: at {json_path}: ")


def test_loader_fault_inside_a_group_and_duplicates(tmp_path):
    group = {"group": "g", "cases": [case_doc("g-ok"), case_doc("g-bad", tags="nope"),
                                     case_doc("dup")]}
    cases, errors = load_files(tmp_path, {"a.json": case_doc("dup"), "b.json": group})
    assert [c.id for c in cases] == ["dup", "g-ok"]
    assert [(e.path.name, e.json_path, e.case_id) for e in errors] == [
        ("b.json", "$.cases[1].tags", "g-bad"), ("b.json", "$.cases[2].id", "dup")]
    assert errors[1].message == f"duplicate case id 'dup' (first in {tmp_path / 'a.json'})"


def test_loader_missing_directory_and_repository_corpus(tmp_path):
    cases, errors = load_corpus([tmp_path / "nowhere"])
    assert cases == [] and [e.message for e in errors] == ["no such cases directory"]
    cases, errors = load_corpus()
    assert errors == [], [str(e) for e in errors]
    assert len({c.id for c in cases}) == len(cases)
    assert {"spec7-no-prefix", "spec7-swa-window-totals"} <= {c.id for c in cases}
    assert all(c.path.is_relative_to(DEFAULT_CASES_DIR) for c in cases)


def test_load_fault_items_have_unique_node_ids(tmp_path):
    group = {"group": "g", "cases": [case_doc("g-ok"), case_doc("g-bad", tags="nope"),
                                     case_doc("g-ok")]}
    (tmp_path / "g.json").write_text(json.dumps(group))
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTEST_ADDOPTS", "PYTEST_XDIST_WORKER")}
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "conformance/", "-p", "no:cacheprovider", "--collect-only",
         "-q", "--planner", "python", "--cases", str(tmp_path)],
        cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=120)
    ids = [line for line in result.stdout.splitlines() if "::" in line]
    assert len([i for i in ids if "[load]" in i]) == 2, result.stdout  # two faults, two items
    assert len(ids) == len(set(ids)) == 3, ids
