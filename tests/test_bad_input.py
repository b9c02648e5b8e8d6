"""Bad input to the harness itself: each is one clear line naming the file and the
place, never a traceback, and the rest of the run is unaffected. Runs pytest and the CLI in
subprocesses, as a user would, since "no traceback" is a claim about what the user sees."""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from conformance.corpus.loader import load_corpus
from tests.case_docs import case_doc
from tests.subproc import run_cli, run_pytest

GOOD = case_doc("-", description="spec §7: rpi [2], prefix [7], extend [1].", tags=[],
                source={"kind": "spec", "ref": "docs/spec/offsets-planner.md §7"},
                golden_check="hand: spec §7")
del GOOD["id"]  # each test names its own
LINEAR = {"generator": "linear", "max_reqs": 4, "max_seq_len": 16}


def _with_inputs(case_id: str, **inputs) -> dict:
    return {**GOOD, "id": case_id, "inputs": {**GOOD["inputs"], **inputs}}


BAD_FILES = {
    # file name: (content, what its one line must say)
    "malformed.json": ('{"id": "broken", "tags": [1, 2,,]}',
                       "malformed.json: at line 1 column 32: malformed JSON: Expecting value"),
    "no-description.json": (json.dumps({k: v for k, v in GOOD.items() if k != "description"}
                                       | {"id": "no-description"}),
                            "no-description.json: at $: 'description' is a required property"),
    "dup-b.json": (json.dumps(GOOD | {"id": "dup-id"}),
                   "dup-b.json: at $.id: duplicate case id 'dup-id' (first in "),
    "huge-table.json": (json.dumps(_with_inputs("huge-table", req_to_token={
        "generator": "linear", "max_reqs": 1 << 20, "max_seq_len": 1 << 20})),
        "huge-table.json: at $.inputs.req_to_token: table 1048576 x 1048576 = 1099511627776 "
        "elements exceeds the limit of 33554432"),
    "huge-array.json": (json.dumps(_with_inputs("huge-array", prefix_lens={"fill": 1, "len": 1 << 40})),
                        "huge-array.json: at $.inputs.prefix_lens: bad array spec: len 1099511627776 "
                        "exceeds the limit of 1048576 elements"),
    "huge-lut.json": (json.dumps(_with_inputs("huge-lut", lut={"generator": "identity", "len": 1 << 40})),
                      "huge-lut.json: at $.inputs.lut.len: LUT length 1099511627776 exceeds the "
                      "limit of 8388608"),
    "huge-capacity.json": (json.dumps(_with_inputs("huge-capacity", write_req_capacity=1 << 40)),
                           "huge-capacity.json: at $.inputs.write_req_capacity: write_req_capacity "
                           "1099511627776 exceeds the limit of 1048576"),
    "set-outside.json": (json.dumps(_with_inputs("set-outside", req_to_token=LINEAR | {"set": [[4, 0, -1]]})),
                         "set-outside.json: at $.inputs.req_to_token.set[0]: [4, 0] is outside the "
                         "4 x 16 table"),
}


@pytest.fixture
def bad_corpus(tmp_path: Path) -> Path:
    cases = tmp_path / "cases"
    cases.mkdir()
    (cases / "dup-a.json").write_text(json.dumps(GOOD | {"id": "dup-id"}))
    (cases / "good.json").write_text(json.dumps(GOOD | {"id": "good-one"}))
    for name, (content, _) in BAD_FILES.items():
        (cases / name).write_text(content)
    return cases


def test_every_fault_is_refused_at_load_with_its_place(bad_corpus: Path):
    cases, errors = load_corpus([bad_corpus])  # in-process: nothing is allocated
    assert sorted(c.id for c in cases) == ["dup-id", "good-one"]
    messages = sorted(str(e) for e in errors)
    assert len(messages) == len(BAD_FILES)
    for _, want in BAD_FILES.values():
        assert sum(want in m for m in messages) == 1, (want, messages)


def test_a_run_with_faulty_files_reports_one_line_each_and_runs_the_rest(bad_corpus: Path,
                                                                         tmp_path: Path):
    proc, items = run_pytest(tmp_path, "--cases", str(bad_corpus), "--planner", "python")
    assert proc.returncode == 1
    assert items["good-one[python]"].outcome == "passed"
    assert items["dup-id[python]"].outcome == "passed"  # the first file's case still runs
    loads = {name: item for name, item in items.items() if name.endswith("[load]")}
    assert len(loads) == len(BAD_FILES)
    for _, want in BAD_FILES.values():
        [text] = [item.text for item in loads.values() if want in item.text]
        assert len(text.strip().splitlines()) == 1 and text.startswith("bad case file: ")
    assert "Traceback" not in proc.stdout + proc.stderr
    assert "conformance summary" in proc.stdout


def _one_line_error(proc) -> str:
    lines = [ln for ln in proc.stderr.splitlines() if ln.strip()]
    assert "Traceback" not in proc.stderr + proc.stdout
    assert len(lines) == 1, proc.stderr
    return lines[0]


@pytest.mark.slow  # five refused starts, each a whole pytest process: about 14 s on 2 cores
def test_unknown_and_unimportable_planners_and_old_results_are_one_line(tmp_path: Path):
    results = tmp_path / "old-results.json"
    results.write_text(json.dumps({"format": "planner-conformance-results", "version": 999,
                                   "results": []}))
    runs = {
        "unknown": lambda: run_pytest(tmp_path / "a", "--planner", "nosuch")[0],
        "unimportable": lambda: run_pytest(tmp_path / "b", "--planner", "no_such_module:launch")[0],
        "no-attr": lambda: run_cli("fuzz", "--planner", "tests.planted.fuzz_planners:nope", "--n", "1"),
        "report": lambda: run_cli("report", str(results), "--format", "text"),
    }
    for sub in ("a", "b"):
        (tmp_path / sub).mkdir()
    with ThreadPoolExecutor(len(runs)) as pool:  # four interpreters at once: a quarter the wait
        procs = {name: future.result() for name, future in
                 [(name, pool.submit(run)) for name, run in runs.items()]}
    assert procs["unknown"].returncode == 4
    assert _one_line_error(procs["unknown"]) == (
        "ERROR: unknown planner 'nosuch': use one of python, triton, numba-cuda, triton-bound, "
        "numba-cuda-bound, or module.path:callable")
    assert procs["unimportable"].returncode == 4
    assert _one_line_error(procs["unimportable"]).startswith(
        "ERROR: cannot import 'no_such_module' for planner 'no_such_module:launch': "
        "ModuleNotFoundError")
    assert procs["no-attr"].returncode == 2
    assert _one_line_error(procs["no-attr"]) == (
        "error: module 'tests.planted.fuzz_planners' has no attribute 'nope'")
    assert procs["report"].returncode != 0
    line = _one_line_error(procs["report"])
    assert str(results) in line and "results format version 999, this harness reads version 1" in line
