"""Hostile review of the call tap, the provenance record, refusal spreading and the report's
checks of a bench file, kept as tests. Planted planners: tests/planted/bench_attacks2.py. Caught:
a plain test asserting the verdict; not caught: a strict xfail whose reason names the hole.

Three CPU bench runs (eager, reused, bs 8, 4 rounds): nine planted planners beside ``python``;
``rigs_the_draw`` alone (its rebinding is process-wide); ``interrupts_after_slowing`` alone (it
ends the session). The rest builds bench files by hand.
"""

from __future__ import annotations

import json

import pytest

from conformance.bench.refusal import refused, spread
from conformance.cli import main as cli_main
from conformance.reporting.bench_figures import load_bench
from conformance.reporting.bench_repeats import merge
from tests.test_bench import _planner_benches, _pytest
from tests.test_repeat_attacks import _bench, _file, _three

ATTACKS = "tests.planted.bench_attacks2"
RUN_A = ("reads_tap_draw", "detects_poison_value", "detects_poison_version",
         "shrinks_median_late", "nan_stats_late", "injects_entry", "poses_with_truth",
         "skips_then_hooks_json", "skips_then_atexit")
_ARGS = ("--bench-bs", "8", "--bench-rounds", "4", "--bench-mode", "eager", "--bench-scenario",
         "reused")
STATS_REWRITTEN = "statistics rewritten after the bench checked its rounds"


def _run(folder, planners):
    out = folder / "bench.json"
    args = [a for p in planners for a in ("--planner", p)]
    proc = _pytest("conformance/bench", *args, *_ARGS, f"--benchmark-json={out}")
    assert out.exists(), proc.stdout[-3000:] + proc.stderr[-3000:]
    return json.loads(out.read_text()), proc


@pytest.fixture(scope="module")
def run_a(tmp_path_factory):
    return _run(tmp_path_factory.mktemp("a"), ["python", *(f"{ATTACKS}:{p}" for p in RUN_A)])


def _entry(doc: dict, name: str) -> dict:
    return next(b for b in doc["benchmarks"] if b["name"].startswith(f"test_plan[{ATTACKS}:{name}-"))


@pytest.mark.slow  # one bench run of ten planners: about 15 s on 2 cores
def test_the_honest_planner_is_published_beside_the_attacks(run_a):
    doc, _ = run_a
    (python,) = [b for b in _planner_benches(doc) if b["params"]["planner"] == "python"]
    assert refused(python) is None and python["stats"]["median"] > 0


@pytest.mark.slow
@pytest.mark.xfail(strict=True, reason="hole: the planner reads the tap's draw (target, count) "
                   "from the timed call's generator frame and computes only on the drawn call "
                   "and a round's last call; README's Benchmarks, 'Not guaranteed', already names it")
def test_a_planner_that_reads_the_tapped_call_from_the_stack_is_refused(run_a):
    assert refused(_entry(run_a[0], "reads_tap_draw"))


@pytest.mark.slow
@pytest.mark.xfail(strict=True, reason="hole: the tap's fill is the constant POISON; a planner "
                   "computes only when its output holds it (README's Benchmarks, 'Not guaranteed')")
def test_a_planner_that_computes_only_on_poisoned_outputs_is_refused(run_a):
    assert refused(_entry(run_a[0], "detects_poison_value"))


@pytest.mark.slow
@pytest.mark.xfail(strict=True, reason="hole: the tap's fill_ bumps the output tensor's _version "
                   "counter; a planner comparing it with the value after its own write tells the "
                   "tapped call apart without reading an output (no device sync on a GPU), so a "
                   "random poison value would not close the hole either")
def test_a_planner_that_watches_its_outputs_version_counter_is_refused(run_a):
    assert refused(_entry(run_a[0], "detects_poison_version"))


@pytest.mark.slow
@pytest.mark.parametrize("name", ["shrinks_median_late", "nan_stats_late"])
def test_statistics_overwritten_in_the_cache_after_the_loop_are_refused(run_a, name):
    # fixed: provenance.vouch recomputes every statistic from the data it recorded
    b = _entry(run_a[0], name)
    assert refused(b) == STATS_REWRITTEN and b["stats"]["median"] is None


@pytest.mark.slow
def test_an_entry_injected_into_the_session_is_refused_and_judges_no_goal(run_a):
    # fixed: provenance.vouch refuses an entry of no test the harness ran that reads as its own
    doc, _ = run_a
    forged = next(b for b in doc["benchmarks"] if b["name"].startswith("test_plan[triton-replay"))
    assert refused(forged) == ("not measured by a benchmark test the harness ran: an entry added "
                               "to the run")
    goal = next(g for g in doc["conformance_goals"]["goals"]
                if g["goal"] == "replay device time at bs 4096")
    assert goal["verdict"].startswith("not judged: a figure was refused") and goal["median"] is None


@pytest.mark.slow
@pytest.mark.xfail(strict=True, reason="hole: provenance._TRUTH is mutable on the heap; rewriting "
                   "the record with the fixture makes the put-back agree (README: 'a planner that "
                   "rewrites this module's records on the heap')")
def test_a_planner_rewriting_the_harness_record_cannot_pose_as_triton(run_a):
    b = _entry(run_a[0], "poses_with_truth")
    assert b["params"]["planner"].endswith(":poses_with_truth") or refused(b)


@pytest.mark.slow
@pytest.mark.xfail(strict=True, reason="hole: a pytest plugin the planner registers at run time "
                   "rewrites output_json after the put-back (pytest_benchmark_update_json "
                   "wrapper); the JSON is written in the planner's process")
def test_a_refused_figure_un_refused_by_a_planner_registered_hook_stays_refused(run_a):
    assert refused(_entry(run_a[0], "skips_then_hooks_json"))


@pytest.mark.slow
@pytest.mark.xfail(strict=True, reason="hole: an atexit handler (or any process the planner "
                   "leaves behind) rewrites the JSON file after pytest wrote it; nothing in the "
                   "process can vouch for a file after the process ends")
def test_a_refused_figure_rewritten_in_the_file_at_exit_stays_refused(run_a):
    assert refused(_entry(run_a[0], "skips_then_atexit"))


@pytest.mark.slow  # a bench run of its own (the rebinding is process-wide), about 5 s
def test_a_planner_that_rigs_the_judges_seed_and_draws_is_refused(tmp_path):
    # fixed: os.urandom and random.Random are watched and captured by RoundJudge at import
    doc, proc = _run(tmp_path, [f"{ATTACKS}:rigs_the_draw"])
    (mine,) = _planner_benches(doc)
    assert refused(mine) == ("timer tampered: os.urandom, random.Random replaced when the planner "
                             "was resolved")
    assert mine["extra_info"]["judge_seed"] != 0  # the real os.urandom drew it, not the planner's
    assert proc.returncode == 1


@pytest.mark.slow  # a bench run of its own (it interrupts the session), about 5 s
def test_a_planner_that_interrupts_the_session_before_the_loop_check_is_refused(tmp_path):
    # fixed: provenance records the fixture when the test's call starts, so an entry whose test
    # never reached its report is still vouched (its rounds were never checked)
    doc, proc = _run(tmp_path, [f"{ATTACKS}:interrupts_after_slowing"])
    (mine,) = _planner_benches(doc)
    assert refused(mine) == "its rounds were never checked by the bench"
    assert mine["stats"]["median"] is None and proc.returncode != 0


# --- bench files built by hand ------------------------------------------------------------------

@pytest.mark.xfail(strict=True, reason="hole: a goal record is checked against itself and the "
                   "file's repeat count, not re-derived from the file's entries: a self-consistent "
                   "false median (and 'met') is shown")
def test_a_goal_record_with_a_false_but_consistent_median_is_refused(tmp_path):
    from conformance.reporting.bench_figures import BenchError

    record = {"goal": "eager, varying-bs, triton and numba-cuda", "target": "<= 20 us",
              "median": 15.0, "low": 14.0, "high": 16.0, "repeats": 3,
              "where": "triton varying-bs bs 1..4096", "verdict": "met"}
    path = _file(tmp_path / "b.json", _three((40.0, 41.0, 42.0)),
                 conformance_goals={"repeats": 3, "goals": [record]})
    with pytest.raises(BenchError):
        load_bench(path)


def test_a_refused_repeat_spelled_as_another_figure_leaves_the_figure_short_and_refused():
    benches = [_bench("triton", "eager", 64, 10.0, i) for i in (1, 2, 3)]
    benches[1]["extra_info"]["refused"] = "outputs wrong"
    benches[1]["fullname"] = benches[1]["fullname"].replace("bench/", "bench/./")
    merged = {b["fullname"]: b for b in merge(spread([dict(b) for b in benches]))}
    kept = merged[benches[0]["fullname"].replace("-repeat1]", "]")]
    # fixed: bench_repeats.repeats counts the highest repeat index too
    assert refused(kept) == ("2 of 3 repeats measured: a repeat left no figure (its test errored "
                             "or did not run)")


def test_compare_counts_a_figure_renamed_in_new_as_missing(tmp_path, capsys):
    old = _file(tmp_path / "a.json", [_bench("triton", "eager", 64, 10.0 + i / 10, i)
                                      for i in (1, 2, 3)])
    renamed = [_bench("triton", "eager", 64, 30.0 + i / 10, i) for i in (1, 2, 3)]
    for b in renamed:
        b["fullname"] = b["fullname"].replace("test_plan[", "test_plan[x")
    new = _file(tmp_path / "b.json", renamed)
    assert cli_main(["report", "--compare", str(old), str(new), "--format", "text",
                     "--fail-on-regression"]) == 1
    text = capsys.readouterr().out
    assert "1 benchmark figure(s) of OLD missing from NEW" in text


def test_a_nan_median_in_new_is_not_a_figure(tmp_path):
    from conformance.reporting.bench_figures import BenchError

    benches = [_bench("triton", "eager", 64, 10.0 + i, i) for i in (1, 2, 3)]
    for b in benches:
        b["stats"]["median"] = float("nan")
    with pytest.raises(BenchError, match="medians are zero, negative or NaN"):
        load_bench(_file(tmp_path / "b.json", benches))
