"""The twenty-fifth hostile review: a wrong planner against the code changed on 2026-12-07 (the
divergence profile's "reads past the row", ``fuzz --jobs``, the terminal's judged lines, the
bench's ``x reference``). Each attack is kept as a test of the verdict the harness must give;
planted planners in tests/planted/hostile25_planners.py."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from conformance.corpus.loader import load_corpus
from conformance.engine.situations import credit_situations
from conformance.reporting import divergence_profile
from conformance.reporting.results_format import load_results
from impls.offsets_planner.harness.element_rules import SEEDS, _upstream_seed, case_rules
from impls.offsets_planner.harness.hazards import LutValues, TableValues
from tests.subproc import REPO, run_pytest

PLANTED = "tests.planted.hostile25_planners"
CASES = REPO / "tests" / "data" / "hostile25"
BOTH = "h25-past-row-and-lut-clamp"  # a past-row seed whose clamped slot is past the LUT


def _case(tmp_path: Path, case: dict):
    """The one case of a case file written under ``tmp_path`` from ``case``, loaded."""
    doc = {"group": "hostile25", "description": "one case",
           "defaults": {"pins": "project", "tags": ["hazard"], "golden_check": "hand",
                        "source": {"kind": "spec", "ref": "docs/spec/offsets-planner.md §6"}},
           "cases": [case]}
    (tmp_path / "c.json").write_text(json.dumps(doc))
    cases, faults = load_corpus([tmp_path])[:2]
    assert not faults, faults
    return cases[0]


def _loaded(case_id: str):
    cases = load_corpus([CASES])[0]
    return next(c for c in cases if c.id == case_id)


# 1. The divergence profile's "upstream" word (situations.py, element_rules' upstream values)

def test_upstreams_past_row_value_is_not_credited_to_the_lut_clamp_row_that_shows_there_too():
    """Attack (fooled, fixed): a request past its row whose clamped slot table[1, 15] = 31 is
    past the LUT (20 long) reaches past-row and lut-clamp on the same seed; past-row decides it.
    Upstream's flat read table[2, 0] = 3 lands inside the LUT: lut[3] = 1003, no clamp. A planner
    that reads past the row and never clamps the LUT gives 1003; the profile said it "clamps" in
    the lut-clamp row (upstream's word there), which its value does not show. Only the row that
    decides the element (spec section 8) may be credited with upstream's value there."""
    case = _loaded(BOTH)
    rules = case_rules(case)
    assert rules[0].upstream == {(SEEDS, 0): 1003}
    assert rules[0].rule(SEEDS, 0) == "past-row"
    assert sorted(rules[0].shows) == ["lut-clamp", "past-row"]
    words: dict[str, str] = {}
    credit_situations(words, {(0, SEEDS, 0): {"value"}}, rules, {(0, SEEDS, 0): {1003}})
    assert words == {"past-row": "upstream", "lut-clamp": "other"}


@pytest.mark.slow  # two planners on one case, about 12 s on 2 cores
def test_the_profile_of_a_planner_that_never_clamps_the_lut_does_not_say_it_clamps(tmp_path):
    """The same attack end to end: ``flat_read_no_lut_clamp`` is judged ``differs`` (a project
    rule decides the seed; exit 0 under --profile contract), and the profile says it reads past
    the row and gives another seed where the LUT clamps, never "clamps"."""
    planner = f"{PLANTED}:flat_read_no_lut_clamp"
    proc, _ = run_pytest(tmp_path, "--planner", planner, "--no-isolate", "--extra-cases",
                         str(CASES), "--case", BOTH)
    assert proc.returncode == 0, proc.stdout[-3000:]
    doc = load_results(tmp_path / "results.json")
    (result,) = doc["results"]
    assert result["status"] == "differs"
    assert result["verdict"]["situations"] == {"lut-clamp": "other", "past-row": "upstream"}
    cells = {row["key"]: row["cells"][planner]
             for row in divergence_profile.profile(doc["results"])["rows"]}
    assert cells["past-row"] == "reads past the row x1"
    assert cells["lut-clamp"] == "gives another seed x1"


def test_a_contract_failure_beside_upstreams_value_still_fails():
    """Attack (caught): upstream's value on the past-row seed and a wrong write offset on the same
    step: the row is credited 'upstream', and the verdict is still the contract's failure (the
    situations words feed the profile only, never the status)."""
    from conformance.engine.verdict import Difference, VerdictData, status_of

    data = VerdictData()
    data.add(Difference(0, "a", "value", SEEDS, 0, 1003, 1019, "past-row"))
    data.add(Difference(0, "a", "value", "out_write_offsets", 1, 2, 1, "contract"))
    assert status_of(data, "contract")[0] == "fail"
    alone = VerdictData()
    alone.add(Difference(0, "a", "value", SEEDS, 0, 1003, 1019, "past-row"))
    assert status_of(alone, "contract")[0] == "differs"


def test_upstreams_seed_on_a_one_column_table_reads_the_next_rows():
    """``_upstream_seed`` on a table of one column (max_seq_len 1): prefix p on row r reads the
    flat element r + p - 1, the first (only) element of row r + p - 1; none past the table."""
    table = TableValues({"generator": "explicit", "values": [[7], [8], [9], [10]]})
    assert _upstream_seed(1, 2, table, None) == 9
    assert _upstream_seed(1, 3, table, None) == 10
    assert _upstream_seed(2, 3, table, None) is None
    lut = LutValues({"generator": "shift", "len": 9, "shift": 100})
    assert _upstream_seed(1, 2, table, lut) == 108  # slot 9 past the LUT: index clamped to 8


def test_upstreams_seed_follows_each_steps_table_and_lut_changes(tmp_path):
    """``req_to_token_set`` and ``lut_set`` change the table and the LUT before their step and
    persist (conformance/engine/steps.py): upstream's value of each step reads them as they are
    then, never the case's first values."""
    case = _case(tmp_path, {
        "id": "h25-steps", "description": "past-row on each step, the flat element changed",
        "tags": ["hazard", "lut", "swa"],
        "inputs": {"req_to_token": {"generator": "linear", "max_reqs": 4, "max_seq_len": 16},
                   "lut": {"generator": "shift", "len": 64, "shift": 1000},
                   "swa_window_size": 64, "verify_capacity": 100000},
        "steps": [
            {"inputs": {"req_pool_indices": [1], "prefix_lens": [18], "extend_seq_lens": [1]},
             "expect": {"out_verify_offsets_scratch": [0, 18], "out_write_offsets": [0, 1],
                        "out_write_seed_slot_indices": [1031], "out_verify_num_valid": 18,
                        "out_verify_enable": 1, "out_write_num_valid_reqs": 1}},
            {"inputs": {"req_pool_indices": [1], "prefix_lens": [18], "extend_seq_lens": [1],
                        "req_to_token_set": [[2, 1, 5]], "lut_set": [[5, 77]]},
             "expect": {"out_verify_offsets_scratch": [0, 18], "out_write_offsets": [0, 1],
                        "out_write_seed_slot_indices": [1031], "out_verify_num_valid": 18,
                        "out_verify_enable": 1, "out_write_num_valid_reqs": 1}},
            {"inputs": {"req_pool_indices": [1], "prefix_lens": [18], "extend_seq_lens": [1]},
             "expect": {"out_verify_offsets_scratch": [0, 18], "out_write_offsets": [0, 1],
                        "out_write_seed_slot_indices": [1031], "out_verify_num_valid": 18,
                        "out_verify_enable": 1, "out_write_num_valid_reqs": 1}}]})
    # flat read at 1 * 16 + 17 = 33: table[2, 1] = 33 at first (lut: 33 + 1000), then 5 -> 77
    assert [rules.upstream for rules in case_rules(case)] == [
        {(SEEDS, 0): 1033}, {(SEEDS, 0): 77}, {(SEEDS, 0): 77}]


def test_upstreams_value_on_one_step_and_another_on_the_next_is_not_upstreams_behaviour(tmp_path):
    """Attack (caught): upstream's value on the first step of a case, another on the second; the
    row is credited ``other`` whichever step comes first (situations._credit)."""
    case = _case(tmp_path, {
        "id": "h25-two-steps", "description": "past-row on two steps",
        "inputs": {"req_to_token": {"generator": "linear", "max_reqs": 4, "max_seq_len": 16},
                   "verify_capacity": 100000},
        "steps": [{"inputs": {"req_pool_indices": [1], "prefix_lens": [18],
                              "extend_seq_lens": [1]},
                   "expect": {"out_verify_offsets_scratch": [0, 18], "out_write_offsets": [0, 1],
                              "out_write_seed_slot_indices": [31], "out_verify_num_valid": 18,
                              "out_verify_enable": 1, "out_write_num_valid_reqs": 1}}] * 2})
    rules = case_rules(case)
    assert [r.upstream for r in rules] == [{(SEEDS, 0): 33}] * 2
    at = {(0, SEEDS, 0): {"value"}, (1, SEEDS, 0): {"value"}}
    for got in ({(0, SEEDS, 0): {33}, (1, SEEDS, 0): {40}}, {(0, SEEDS, 0): {40}, (1, SEEDS, 0): {33}},
                {(0, SEEDS, 0): {33, 40}, (1, SEEDS, 0): {33}}):
        words: dict[str, str] = {}
        credit_situations(words, at, rules, got)
        assert words == {"past-row": "other"}, got


# 2. fuzz --jobs

@pytest.mark.slow  # a fuzz run of 30 isolated plans over two jobs, about 20 s on 2 cores
def test_a_planner_that_ends_its_worker_with_status_0_under_jobs_is_a_divergence(tmp_path):
    """Attack (caught): an external planner that calls ``os._exit(0)`` whenever there is a LUT,
    under ``fuzz --jobs 2`` (each job's isolation worker): every such plan is a ``crash:``
    divergence, the run exits 1, never 0, and does not hang."""
    proc = subprocess.run([sys.executable, "-m", "conformance", "fuzz", "--planner",
                           f"{PLANTED}:exits_zero_with_a_lut", "--n", "30", "--seed", "3",
                           "--jobs", "2", "--no-progress", "--max-found", "0",
                           "--out", str(tmp_path / "found")],
                          cwd=REPO, capture_output=True, text=True, timeout=600)
    found = re.search(r"divergences: \S+ \(external\) (\d+);", proc.stdout)
    assert proc.returncode == 1 and found and int(found.group(1)) > 0, \
        proc.stdout + proc.stderr[-3000:]


def test_a_late_record_of_an_earlier_chunks_plan_is_kept_as_its_own_entry():
    """Attack (caught): a job keeps its isolation workers from chunk to chunk, so what a planner
    did after the last call of a chunk's last plan is found in the job's next chunk; it comes
    back as an entry of that earlier plan, and a plan's own failure is not overwritten."""
    from conformance.robustness.fuzz_jobs import _with_late

    out = [(50, {}), (51, {"p": "value"})]
    merged = _with_late(out, [("p", 24, "late: A"), ("p", 51, "late: B"), ("q", 50, "late: C")])
    assert merged == [(50, {"q": "late: C"}), (51, {"p": "value"}), (24, {"p": "late: A"})]


# 3. The terminal's judged lines (conformance/plugin/profiles.py)

class _Terminal:
    def __init__(self) -> None:
        self.lines: list[str] = []

    def write_line(self, line: str) -> None:
        self.lines.append(line)


def test_the_judged_lines_escape_a_planners_name_and_a_case_id():
    """Attack (fooled, fixed): a planner name (and a case id) with ESC, a carriage return and a
    line break on the terminal's judged lines. ESC and CR were escaped, but the line break was
    kept (terminal_text keeps a text's lines), so the name wrote a line of its own ("all 12
    passed"). Each result is one line, every control character escaped."""
    from conformance.plugin.profiles import ProfileJudge

    judge = ProfileJudge.__new__(ProfileJudge)
    judge.profile = "contract"
    judge.results = {"a": {"status": "differs", "case": "c\x1b[2J", "planner":
                           "m:a\nall 12 passed\r\x1b]0;x\x07"}}
    tr = _Terminal()
    judge._judged_lines(tr)
    assert len(tr.lines) == 2, tr.lines
    assert not any(c in tr.lines[1] for c in "\x1b\r\n\x07"), tr.lines


# 4. The bench's x reference (conformance/bench/summary_table.py)

def _bench(planner: str, us: float, mode: str = "eager") -> dict:
    return {"params": {"planner": planner, "mode": mode, "bs": 8, "scenario": "reused",
                       "workload": "serving"}, "stats": {"median": us / 1e6}, "extra_info": {}}


def test_x_reference_is_never_on_the_reference_planners_own_rows_and_always_on_the_others():
    """Attack (caught): the one ``module:attr`` planner of a run is the reference; its own rows
    carry no ratio (1 against itself), every other planner's does, and a second external
    planner makes no reference at all (which of two would it be?)."""
    from conformance.bench.summary_table import annotate

    benches = annotate([_bench("up:launch", 10.0), _bench("triton", 4.0), _bench("python", 8.0)])
    ratios = {b["params"]["planner"]: b["extra_info"]["ratio_to_reference"] for b in benches}
    assert ratios == {"up:launch": None, "triton": 0.4, "python": 0.8}
    assert benches[0]["extra_info"]["reference_planner"] is None
    two = annotate([_bench("up:launch", 10.0), _bench("mine:launch", 1.0), _bench("triton", 4.0)])
    assert all(b["extra_info"]["ratio_to_reference"] is None for b in two)
