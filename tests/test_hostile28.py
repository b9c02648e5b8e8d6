"""Twenty-eighth hostile review, kept as tests: the judge's per-element verdicts on elements a
wrong planner may touch only in places the corpus rarely reaches (lanes past bs, batch sizes),
writes a thread makes after the call returned, and the run's outcome plumbing under
pytest-xdist. Planted planners: tests/planted/hostile28_planners.py.

Fooled before this review, fixed here (a corpus gap, not a judge hole):

* A planner that stores the seeds and write offsets in whole tiles of 8 lanes from bs 8 up
  (the lanes past bs, up to the capacity, get -1 and the total: spec section 5 says nothing
  else is written) passed all 231 cases: every valid step with bs >= 8 had buffers of exactly
  bs requests (``write_req_capacity`` = bs), so no lane past bs existed there; the 9 steps with a
  tail had bs <= 3. ``cases/offsets-planner/boundary/batch-sizes.json`` now has ``bs-1021-tail``
  (no multiple of any tile) and ``bs-1024-tail`` (the one power-of-two block edge the file
  lacked) in buffers for 1100 requests.

Tried, and the harness held:

* A planner that returns with every output unwritten and has a daemon thread write the right
  plan a millisecond later (in a server the caller reads the plan at once): the isolated
  engine reads the shared memory when the worker's reply arrives, so the outputs read
  ``never-written`` (the thread's write is found after the case's last call too, where it lands
  before the worker's next case or the linger's end: a race, not asserted). The same
  thread writing the moment the call's frame is gone (no sleep, one ``memmove`` per output)
  wins that race on some calls only (about 10-80% of the spec section 7 cases on a loaded
  2-core machine), never on a whole corpus: not kept as a test, since its outcome is a race.
* The tile planner under ``-n 2``: the controller's results file is complete, holds the fail,
  and pytest and ``report --strict`` exit 1 and 0 (the report is written; it names the fail).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from conformance.corpus.loader import load_corpus
from tests.subproc import REPO, run_pytest

PLANTED = "tests.planted.hostile28_planners"
CASES = REPO / "cases" / "offsets-planner"


def _results(tmp: Path) -> list[dict]:
    return json.loads((tmp / "results.json").read_text())["results"]


def _statuses(tmp: Path) -> dict[tuple[str, str], str]:
    return {(r["case"], r["planner"].rsplit(":", 1)[-1]): r["status"] for r in _results(tmp)}


# --- lanes past bs on a large batch: a corpus gap, closed ----------------------------------------

def test_the_corpus_has_large_batches_with_lanes_past_bs():
    cases, faults = load_corpus([CASES])
    assert not faults
    tails = {(c.id, s.bs) for c in cases if c.entry == "launcher" for s in c.steps
             if s.error is None and 8 <= s.bs < c.write_req_capacity and s.bs % 8}
    assert ("bs-1021-tail", 1021) in tails
    sizes = {s.bs for c in cases if c.entry == "launcher" for s in c.steps if s.error is None}
    assert {1021, 1024, 1025} <= sizes


def test_tiles_stored_past_bs_from_bs_8_fail(tmp_path):
    proc, _ = run_pytest(tmp_path, "--planner", f"{PLANTED}:tile_of_8_past_bs", "--planner",
                         "python", "--case", "bs-1021-tail", "--case", "bs-1024-tail",
                         "--case", "bs-33", timeout=240)
    out = proc.stdout[-3000:] + proc.stderr[-2000:]
    assert _statuses(tmp_path) == {
        ("bs-1021-tail", "tile_of_8_past_bs"): "fail", ("bs-1021-tail", "python"): "pass",
        ("bs-1024-tail", "tile_of_8_past_bs"): "pass", ("bs-1024-tail", "python"): "pass",
        ("bs-33", "tile_of_8_past_bs"): "pass", ("bs-33", "python"): "pass"}, out
    assert proc.returncode == 1, out
    failed = next(r for r in _results(tmp_path) if r["status"] == "fail")
    diffs = failed["verdict"]["differences"]
    assert {(d["field"], d["what"], d["rule"]) for d in diffs} == {
        ("out_write_seed_slot_indices", "written", "contract"),
        ("out_write_offsets", "written", "contract")}, diffs
    assert min(d["index"] for d in diffs if d["field"] == "out_write_seed_slot_indices") == 1021
    assert min(d["index"] for d in diffs if d["field"] == "out_write_offsets") == 1022


# --- writes after the call returned ----------------------------------------------------------

def test_the_plan_written_by_a_thread_after_returning_fails(tmp_path):
    proc, _ = run_pytest(tmp_path, "--planner", f"{PLANTED}:writes_after_returning",
                         "--case", "spec7-decode-seed", timeout=240)
    out = proc.stdout[-3000:] + proc.stderr[-2000:]
    [result] = _results(tmp_path)
    assert result["status"] == "fail", out
    kinds = {(d["field"], d["what"]) for d in result["verdict"]["differences"]}
    assert ("out_verify_offsets_scratch", "never-written") in kinds, kinds
    assert proc.returncode == 1, out


# --- outcome plumbing under pytest-xdist -----------------------------------------------------

@pytest.mark.slow
def test_a_failing_planner_under_xdist_exits_1_and_the_report_names_it(tmp_path):
    pytest.importorskip("xdist")
    proc, _ = run_pytest(tmp_path, "-n", "2", "--planner", f"{PLANTED}:tile_of_8_past_bs",
                         "--case", "bs-1021-tail", "--case", "bs-33", "--case", "bs-1",
                         timeout=300)
    out = proc.stdout[-3000:] + proc.stderr[-2000:]
    assert proc.returncode == 1, out
    doc = json.loads((tmp_path / "results.json").read_text())
    assert doc["complete"] is True and doc["exitstatus"] == 1 and doc["collected"] == 3, doc
    assert sorted((r["case"], r["status"]) for r in doc["results"]) == [
        ("bs-1", "pass"), ("bs-1021-tail", "fail"), ("bs-33", "pass")]
    report = subprocess.run([sys.executable, "-m", "conformance", "report",
                             str(tmp_path / "results.json"), "--format", "text", "--strict"],
                            cwd=REPO, capture_output=True, text=True, timeout=120)
    assert "bs-1021-tail" in report.stdout and "fail" in report.stdout, report.stdout[-2000:]
    assert report.returncode in (0, 1), report.stderr[-2000:]
