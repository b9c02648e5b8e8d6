"""The summary's line for a case that every planner that ran it failed alike: then the case's
expected values are suspect, not the planners (a fresh user's wrong golden read exactly like a
planner bug). ``conformance.plugin.tally.failed_everywhere``."""

from __future__ import annotations

import json
from pathlib import Path

from conformance.plugin.tally import failed_everywhere
from tests.subproc import run_pytest


def test_only_a_case_failed_on_every_planner_that_ran_it_gets_the_line():
    ran = {("", "a"): {"python", "triton"}, ("", "b"): {"python", "triton"},
           ("", "c"): {"triton"}, ("canary-plan", "d"): {"numba-cuda", "triton"}}
    failed = {("", "a"): {"python", "triton"}, ("", "b"): {"triton"}, ("", "c"): {"triton"},
              ("canary-plan", "d"): {"numba-cuda", "triton"}}
    assert failed_everywhere(ran, failed) == [
        "a: failed on every planner that ran it (python, triton); unless they share the code at "
        "fault, check the case's expected values: `python -m conformance record a` prints the "
        "reference planner's",
        "d (subject canary-plan): failed on every planner that ran it (numba-cuda, triton); "
        "unless they share the code at fault, check the case's expected values: `python -m "
        "conformance record d` prints the reference planner's"]
    assert failed_everywhere({}, {}) == []


def test_the_record_command_loads_the_run_s_case_folders_quoted():
    """A case from ``--cases`` / ``--extra-cases`` is not in the default corpus: the line's
    ``record`` command names the run's folders (``python -m conformance record ID`` alone said
    "no such case id" for it), each quoted for a POSIX shell."""
    ran = failed = {("", "mine"): {"python", "triton"}}
    line, = failed_everywhere(ran, failed, [Path("/tmp/my cases"), Path("/tmp/x;rm -rf ~")])
    assert ("`python -m conformance --cases '/tmp/my cases' --cases '/tmp/x;rm -rf ~' record "
            "mine` prints the reference planner's") in line
    # a run's --extra-cases stay --extra-cases (beside the corpus), as the run gave them
    line, = failed_everywhere(ran, failed, [], [Path("/tmp/my cases")])
    assert ("`python -m conformance --extra-cases '/tmp/my cases' record mine` prints the "
            "reference planner's") in line


def _cases(directory: Path, seed: int) -> Path:
    """Two one-request cases on the linear 4 x 16 table (table[row, pos] = row * 16 + pos): row 2,
    prefix 7, extend 1 seeds slot 2 * 16 + 6 = 38; ``wrong-seed`` expects ``seed`` instead."""
    directory.mkdir()
    golden = {"out_verify_offsets_scratch": [0, 7], "out_write_offsets": [0, 1],
              "out_verify_num_valid": 7, "out_verify_enable": 1, "out_write_num_valid_reqs": 1}
    doc = {"group": "failed-everywhere", "defaults": {
        "source": {"kind": "project", "ref": "tests/test_failed_everywhere.py"},
        "golden_check": "hand: table[row, pos] = row*16 + pos",
        "inputs": {"req_to_token": {"generator": "linear", "max_reqs": 4, "max_seq_len": 16}}},
        "cases": [{"id": case_id, "description": "row 2, prefix 7, extend 1", "tags": [],
                   "inputs": {"req_pool_indices": [2], "prefix_lens": [7], "extend_seq_lens": [1]},
                   "expect": {**golden, "out_write_seed_slot_indices": [want]}}
                  for case_id, want in (("right-seed", 38), ("wrong-seed", seed))]}
    (directory / "cases.json").write_text(json.dumps(doc))
    return directory


def test_a_wrong_golden_is_named_once_and_a_planner_bug_not(tmp_path):
    cases = _cases(tmp_path / "cases", seed=37)
    proc, items = run_pytest(tmp_path, "--cases", str(cases), "--planner", "python",
                             "--planner", "tests.planted.wrong_planners:off_by_one_scan",
                             "-n", "0", timeout=240)
    out = proc.stdout
    assert proc.returncode == 1, out[-3000:]
    assert items["wrong-seed[python]"].outcome == "failed"
    assert items["right-seed[python]"].outcome == "passed"
    assert items["right-seed[tests.planted.wrong_planners:off_by_one_scan]"].outcome == "failed"
    lines = [line for line in out.splitlines() if "failed on every planner that ran it" in line]
    assert lines == [
        "wrong-seed: failed on every planner that ran it (python, "
        "tests.planted.wrong_planners:off_by_one_scan); unless they share the code at fault, "
        f"check the case's expected values: `python -m conformance --cases {cases} record "
        "wrong-seed` prints the reference planner's"], out[-3000:]
