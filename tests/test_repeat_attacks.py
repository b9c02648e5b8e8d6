"""Attacks on ``bench --repeat N`` (goals on the median of N repeats, ratios within a repeat) and
on the files it writes, each asserting the verdict the harness should give. Planted planners:
tests/planted/repeat_attacks.py. Where the harness is fooled the test is a strict xfail whose
reason names the hole.

Two CPU bench runs (eager, 2 rounds, 3 repeats): reused at bs 64 with the honest ``python``
planner and five planted ones, varying-bs at bs 1 with two more; the rest builds benchmark dicts and files by hand and runs them through
the functions the plugin and the report use (``annotate``, ``scrub``, ``published``,
``goals.records``, ``load_bench``, ``report --compare``).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from conformance.bench import goals
from conformance.bench.refusal import refused, scrub
from conformance.bench.summary_table import annotate, rows
from conformance.cli import main as cli_main
from conformance.reporting.bench_figures import BenchError, load_bench
from conformance.reporting.bench_noise import moved
from tests.test_bench import _planner_benches, _pytest

ATTACKS = "tests.planted.repeat_attacks"
PLANTED = ("wrong_in_repeat2", "raises_in_repeat2", "last_iteration_only", "wrong_when_untimed",
           "markup_when_judged")
VARYING = "eager, varying-bs, triton and numba-cuda"
REUSED = "eager, reused, triton and numba-cuda, vs the empty Triton launch"


# --- one bench run of the planted planners, 3 repeats -------------------------------------------

@pytest.fixture(scope="module")
def repeat_run(tmp_path_factory):
    folder = tmp_path_factory.mktemp("bench")
    out = folder / "bench.json"
    args = [a for p in ("python", *(f"{ATTACKS}:{n}" for n in PLANTED)) for a in ("--planner", p)]
    proc = _pytest("conformance/bench", *args, "--bench-bs", "64", "--bench-rounds", "2",
                   "--bench-mode", "eager", "--bench-scenario", "reused", "--bench-repeat", "3",
                   f"--benchmark-json={out}", f"--bench-report={folder / 'bench.md'}")
    assert out.exists(), proc.stdout[-3000:] + proc.stderr[-3000:]
    return json.loads(out.read_text()), proc.stdout, proc.returncode, out


def _entries(doc: dict, planner: str) -> dict[int, dict]:
    return {b["params"]["bench_repeat"]: b for b in _planner_benches(doc)
            if b["params"]["planner"] == planner}


@pytest.mark.slow  # one bench run of 4 planners x 3 repeats: about 9 s on 2 cores
def test_a_planner_wrong_only_in_repeat_2_is_refused_there_and_its_figure_with_it(repeat_run):
    doc, stdout, code, path = repeat_run
    name = f"{ATTACKS}:wrong_in_repeat2"
    by_repeat = _entries(doc, name)
    assert sorted(by_repeat) == [1, 2, 3]
    reason = refused(by_repeat[2]) or ""
    assert reason.startswith("outputs wrong at ") and "the reference plans" in reason, reason
    assert by_repeat[2]["stats"]["median"] is None
    assert code == 1 and f"FAILED conformance/bench/test_bench.py::{by_repeat[2]['name']}" in stdout
    assert f"FAILED conformance/bench/test_bench.py::{by_repeat[1]['name']}" not in stdout
    # the figure (the merge of its repeats) is refused in the terminal table and the report
    row = next(r for r in rows(doc["benchmarks"]) if r[0] == f"{name} [external]")  # as measured
    assert row[3] == f"refused: {reason}"
    report = {r.planner: r for r in load_bench(path)[0]}
    assert report[name].refused == reason
    assert report["python"].refused is None and report["python"].repeats == 3


@pytest.mark.slow  # shares the bench run above (about 9 s on 2 cores)
def test_every_repeat_of_a_planner_caught_in_one_repeat_is_refused_in_the_json(repeat_run):
    # refusal.spread: goals.records reads entries, not merged figures, so no repeat of a caught
    # figure may keep statistics or ratios in the JSON
    doc, stdout, _, _ = repeat_run
    by_repeat = _entries(doc, f"{ATTACKS}:wrong_in_repeat2")
    reason = refused(by_repeat[2])
    assert reason and "refused_in_repeat" not in by_repeat[2]["extra_info"]
    for i in (1, 3):
        assert refused(by_repeat[i]) == reason, (i, by_repeat[i]["stats"]["median"])
        assert by_repeat[i]["extra_info"]["refused_in_repeat"] == 2
        assert by_repeat[i]["stats"]["median"] is None and "data" not in by_repeat[i]["stats"]
        assert by_repeat[i]["extra_info"].get("ratio_to_python") is None
        assert f"FAILED conformance/bench/test_bench.py::{by_repeat[i]['name']}" not in stdout
    # the planner that errored in repeat 2 left no entry there: its other repeats are refused too
    errored = _entries(doc, f"{ATTACKS}:raises_in_repeat2")
    assert sorted(errored) == [1, 3]
    for b in errored.values():
        assert (refused(b) or "").startswith("2 of 3 repeats measured"), refused(b)
        assert b["stats"]["median"] is None
    honest = _entries(doc, "python")
    assert all(not refused(b) and b["stats"]["median"] > 0 for b in honest.values())


@pytest.mark.slow  # shares the bench run above (about 9 s on 2 cores)
def test_a_planner_that_errors_in_one_repeat_gets_no_published_figure(repeat_run):
    doc, stdout, code, path = repeat_run
    name = f"{ATTACKS}:raises_in_repeat2"
    assert sorted(_entries(doc, name)) == [1, 3] and code == 1  # repeat 2 errored: no entry
    assert "test_plan[tests.planted.repeat_attacks:raises_in_repeat2-eager-64-reused-serving-" \
           "repeat2]" in stdout
    row = next(r for r in rows(doc["benchmarks"]) if r[0].startswith(name))
    assert row[3].startswith("refused") or row[3] == "-", row


@pytest.mark.slow  # shares the bench run above (about 9 s on 2 cores)
def test_a_planner_that_computes_only_on_the_judged_call_of_each_round_is_refused(repeat_run):
    # call_tap: in judged rounds a call drawn at random before the last is poisoned and copied
    doc, _, _, _ = repeat_run
    mine = _entries(doc, f"{ATTACKS}:last_iteration_only")
    honest = _entries(doc, "python")
    assert sorted(mine) == [1, 2, 3] and all(not refused(b) for b in honest.values())
    # a round of one call has no call to skip (pytest-benchmark passes no loops_range then); at
    # about 240 us a call and 1 ms a round it has 4 on a quiet machine
    assert any(b["extra_info"]["iterations"] > 1 for b in mine.values()), \
        [b["extra_info"]["iterations"] for b in mine.values()]
    for i, b in mine.items():  # caught in one repeat, refused in all (refusal.spread)
        reason = refused(b) or ""
        assert re.match(r"outputs wrong at call \d+ of round \d+ \(drawn at random\): ",
                        reason), (i, reason)
        assert b["stats"]["median"] is None


@pytest.mark.slow  # shares the bench run above (about 9 s on 2 cores)
def test_a_planner_wrong_only_outside_the_timed_loop_fails_its_test(repeat_run):
    doc, stdout, code, _ = repeat_run
    mine = _entries(doc, f"{ATTACKS}:wrong_when_untimed")
    assert code == 1 and sorted(mine) == [1, 2, 3]
    for b in mine.values():  # the poisoned-output check after the loop catches it, every repeat
        assert f"FAILED conformance/bench/test_bench.py::{b['name']}" in stdout


@pytest.mark.slow  # shares the bench run above (about 9 s on 2 cores)
def test_a_planner_wrong_only_outside_the_timed_loop_gets_its_figure_refused(repeat_run):
    doc, _, _, _ = repeat_run
    mine = _entries(doc, f"{ATTACKS}:wrong_when_untimed")
    assert sorted(mine) == [1, 2, 3]
    for i, b in mine.items():
        reason = refused(b) or ""
        assert reason.startswith("outputs wrong at a call outside the timed loop: ") \
            and "the reference plans" in reason, (i, reason)
        assert b["stats"]["median"] is None and b["extra_info"].get("ratio_to_python") is None
    row = next(r for r in rows(doc["benchmarks"])
               if r[0] == f"{ATTACKS}:wrong_when_untimed [external]")
    assert row[3].startswith("refused: outputs wrong at a call outside the timed loop"), row


@pytest.mark.slow  # shares the bench run above (about 9 s on 2 cores)
def test_a_planners_error_message_is_text_in_the_bench_report(repeat_run):
    from tests.planted.repeat_attacks import MARKUP

    doc, _, _, path = repeat_run
    mine = _entries(doc, f"{ATTACKS}:markup_when_judged")
    assert all(MARKUP in (refused(b) or "") for b in mine.values())  # refused, quoting it
    line = next(ln for ln in (path.parent / "bench.md").read_text().splitlines()
                if "markup_when_judged" in ln and "refused: " in ln)  # its note
    outside_spans = re.sub(r"(`+).*?\1", "", line)  # a code span's text is text, never markup
    assert "<img" not in outside_spans and "refused: " in line, line


@pytest.fixture(scope="module")
def posing_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("bench") / "bench.json"
    proc = _pytest("conformance/bench", "--planner", f"{ATTACKS}:poses_as_triton",
                   "--planner", f"{ATTACKS}:slows_the_floor", "--bench-bs",
                   "1", "--bench-rounds", "2", "--bench-mode", "eager", "--bench-scenario",
                   "varying-bs", "--bench-repeat", "3", f"--benchmark-json={out}")
    assert out.exists(), proc.stdout[-3000:] + proc.stderr[-3000:]
    return json.loads(out.read_text()), proc.returncode


@pytest.mark.slow  # a bench run of its own (2 planners x 3 repeats), about 6 s on 2 cores
def test_a_cpu_run_of_an_external_planner_measures_no_gpu_goal(posing_run):
    # provenance: what the harness recorded at collection is put back on every entry
    doc, _ = posing_run
    assert doc["machine_info"]["gpu"] == "none (CPU only)"
    records = {r["goal"]: r for r in doc["conformance_goals"]["goals"]}
    assert records[VARYING]["verdict"] == goals.NOT_MEASURED, records[VARYING]
    for goal, record in records.items():  # no GPU goal at all on a CPU run
        if "python planner" not in goal:
            assert record["verdict"] == goals.NOT_MEASURED, record
    posed = _entries(doc, f"{ATTACKS}:poses_as_triton")
    assert sorted(posed) == [1, 2, 3]
    for b in posed.values():  # put back as collected, and refused: its rewrite is seen
        assert b["params"]["planner"] == f"{ATTACKS}:poses_as_triton"
        assert b["extra_info"]["planner_mode"] == "external", b["extra_info"]
        assert (refused(b) or "").startswith("entry rewritten during the run: params, "
                                             "extra_info.planner_mode"), refused(b)
    assert not [b for b in _planner_benches(doc) if b["params"]["planner"] == "triton"]


@pytest.mark.slow  # shares the bench run above (about 6 s on 2 cores)
def test_a_planner_that_slows_the_floor_it_is_divided_by_gets_no_ratio(posing_run):
    # floors.floor_call is watched (clocks.watch): rebinding it refuses every figure after it
    doc, _ = posing_run
    floors = [b for b in doc["benchmarks"] if (b.get("extra_info") or {}).get("floor")]
    mine = _entries(doc, f"{ATTACKS}:slows_the_floor")
    assert floors and sorted(mine) == [1, 2, 3]
    for i, b in mine.items():
        assert b["extra_info"].get("ratio_to_floor") is None, \
            (i, b["extra_info"].get("ratio_to_floor"))
        assert "conformance.bench.floors.floor_call replaced" in (refused(b) or ""), \
            (i, refused(b))
    for b in floors:  # every floor timed after the rebinding is refused: none divides a figure
        assert "conformance.bench.floors.floor_call replaced" in (refused(b) or ""), \
            (b["name"], refused(b))


# --- goals over repeats, as the plugin computes them -------------------------------------------

def _bench(planner, mode, bs, us, repeat, scenario="reused", floor=None, refused_why=None):
    name = f"test_plan[{planner}-{mode}-{bs}-{scenario}-serving-repeat{repeat}]"
    params = {"planner": planner, "mode": mode, "bs": bs, "scenario": scenario,
              "workload": "serving", "bench_repeat": repeat}
    extra = {"planner_mode": "gpu", "scenario": scenario}
    if floor:
        name = f"test_floor[{floor}-{mode}-repeat{repeat}]"
        params, extra = {"floor": floor, "mode": mode, "bench_repeat": repeat}, {"floor": floor}
    if refused_why:
        extra["refused"] = refused_why
    q = us * 1e-6
    return {"name": name, "fullname": f"conformance/bench/test_bench.py::{name}",
            "params": params, "extra_info": extra,
            "stats": {"median": q, "min": q * 0.9, "q1": q * 0.98, "q3": q * 1.02, "mean": q,
                      "rounds": 15, "iterations": 1}}


def _goals_as_the_plugin_writes_them(benches: list[dict]) -> dict[str, dict]:
    """pytest_benchmark_update_json: annotate(scrub(...)), then goals.records of every entry,
    refused ones too."""
    return {r["goal"]: r for r in goals.records(annotate(scrub(benches)))}


def _floors(n: int) -> list[dict]:
    return [_bench("", "eager", None, 10.0, i, floor="empty-triton") for i in range(1, n + 1)]


def test_a_goal_whose_figure_was_refused_in_one_repeat_is_not_met():
    benches = [_bench("triton", "eager", 4096, 30.0, 1, "varying-bs", refused_why="outputs wrong"),
               _bench("triton", "eager", 4096, 18.0, 2, "varying-bs"),
               _bench("triton", "eager", 4096, 19.0, 3, "varying-bs"), *_floors(3)]
    record = _goals_as_the_plugin_writes_them(benches)[VARYING]
    assert record["verdict"] != "met", record


def test_a_goal_whose_worst_figure_was_refused_is_not_met():
    benches = [*_floors(3)]
    for i in (1, 2, 3):
        benches += [_bench("triton", "eager", 64, 12.0, i),
                    _bench("triton", "eager", 4096, 40.0, i, refused_why="outputs wrong")]
    record = _goals_as_the_plugin_writes_them(benches)[REUSED]
    assert record["verdict"] != "met", record


def test_one_slow_repeat_is_hidden_by_the_median_but_shown_in_the_range():
    # by design: the median of 3 repeats, the range beside it shows the slow one
    benches = [_bench("triton", "eager", 4096, us, i, "varying-bs")
               for i, us in enumerate((18.0, 60.0, 19.0), 1)] + _floors(3)
    record = _goals_as_the_plugin_writes_them(benches)[VARYING]
    assert (record["median"], record["low"], record["high"], record["repeats"]) == \
        pytest.approx((19.0, 18.0, 60.0, 3))
    assert record["verdict"] == "met"
    assert goals.measured_text(record) == "19 (18..60 over 3 repeats) (triton varying-bs bs 1..4096)"


# --- forged or hand-edited bench files ----------------------------------------------------------

def _file(path: Path, benches: list[dict], **top) -> Path:
    path.write_text(json.dumps({"benchmarks": benches, "datetime": "2026-12-02", **top}))
    return path


_RECORD = {"goal": VARYING, "target": "<= 20 us", "median": 18.4, "low": 17.8, "high": 24.6,
           "repeats": 3, "where": "triton varying-bs bs 1..4096", "verdict": "met"}


def _three(us=(18.0, 18.4, 19.0)) -> list[dict]:
    return [_bench("triton", "eager", 4096, v, i, "varying-bs") for i, v in enumerate(us, 1)]


def test_a_goal_record_whose_verdict_contradicts_its_median_is_refused(tmp_path, capsys):
    # the report re-judges each record from its median and target (the suite's rule: met when
    # the median is at most the target) and refuses the file on a contradiction
    path = _file(tmp_path / "b.json", _three((30.0, 31.0, 32.0)),
                 conformance_goals={"repeats": 3, "goals": [dict(_RECORD, median=31.0,
                                                                  high=32.0)]})
    with pytest.raises(BenchError, match=r"record 0 \('eager, varying-bs, triton and numba-cuda'"
                       r"\): verdict 'met' but median 31 is over target '<= 20 us'"):
        load_bench(path)
    for lie in ({"verdict": "missed by 1.20x (x)", "median": 18.4},  # a miss within the target
                {"verdict": "missed by 9.99x (x)", "median": 24.0, "high": 25.0},  # not 1.20x
                {"verdict": "met", "median": None, "low": None, "high": None, "repeats": None},
                {"verdict": "met", "median": 18.4, "low": 19.0},  # median outside low..high
                {"verdict": "met", "target": "about 20 us"}):  # a target it cannot re-judge
        _file(path, _three(), conformance_goals={"repeats": 3, "goals": [dict(_RECORD, **lie)]})
        with pytest.raises(BenchError):
            load_bench(path)
    missed = "missed by 1.20x (triton varying-bs bs 1..4096)"
    _file(path, _three(), conformance_goals={"repeats": 3, "goals": [dict(
        _RECORD, median=24.0, high=25.0, verdict=missed)]})
    assert load_bench(path)[1]["goals"][0]["verdict"].startswith("missed by 1.20x")  # honest
    # what the suite writes (met, missed, not measured) is what the report accepts
    benches = [*(_bench("", "eager", None, 10.0 + i / 10, i, floor="empty-triton")
                 for i in (1, 2, 3)),
               *(_bench("triton", "eager", 4096, us, i, "varying-bs")
                 for i, us in enumerate((18.0, 60.0, 25.0), 1)),
               *(_bench("triton", "eager", 64, 12.0 + i / 10, i) for i in (1, 2, 3))]
    written = list(_goals_as_the_plugin_writes_them(benches).values())
    assert {r["verdict"].split(" ")[0] for r in written} >= {"met", "missed", "not"}
    _file(path, benches, conformance_goals={"repeats": 3, "goals": written})
    assert load_bench(path)[1]["goals"] == written
    _file(path, _three((30.0, 31.0, 32.0)),
          conformance_goals={"repeats": 3, "goals": [dict(_RECORD, median=31.0, high=32.0)]})
    other = _file(tmp_path / "a.json", _three())
    assert cli_main(["report", "--compare", str(other), str(path), "--format", "text"]) == 2
    out = capsys.readouterr()
    assert out.out == "" and out.err.startswith(f"error: {path}: conformance_goals record 0 (")
    assert "over target" in out.err


def test_a_goal_record_with_a_nan_median_is_refused(tmp_path):
    path = tmp_path / "b.json"
    for odd in ({"median": float("nan"), "high": float("inf")}, {"low": float("-inf")},
                {"high": float("inf")}):
        path.write_text(json.dumps({"benchmarks": _three(), "conformance_goals": {
            "repeats": 3, "goals": [dict(_RECORD, **odd)]}}))
        with pytest.raises(BenchError, match="not finite"):
            load_bench(path)


def test_a_goal_record_claiming_more_repeats_than_the_file_has_is_refused(tmp_path):
    one = [dict(_bench("triton", "eager", 4096, 18.4, 1, "varying-bs"))]
    one[0]["params"].pop("bench_repeat")
    one[0]["name"] = one[0]["name"].replace("-repeat1", "")
    one[0]["fullname"] = one[0]["fullname"].replace("-repeat1", "")
    alone = _file(tmp_path / "a.json", one)
    assert load_bench(alone)[1]["repeats"] == 1  # the file's own count is read from its entries
    path = _file(tmp_path / "b.json", one,
                 conformance_goals={"repeats": 5, "goals": [dict(_RECORD, repeats=5)]})
    with pytest.raises(BenchError, match="repeats 5 but the file holds 1 repeat"):
        load_bench(path)
    honest = dict(_RECORD, repeats=1, low=18.4, high=18.4, median=18.4)
    _file(path, one, conformance_goals={"repeats": 1, "goals": [honest]})
    assert load_bench(path)[1]["goals"] == [honest]


def _single(us: float, claimed: list[float]) -> dict:
    """One entry of one run, hand-edited to carry a merged figure's repeat p50s."""
    b = _bench("triton", "eager", 64, us, 1)
    b["params"].pop("bench_repeat")
    b["name"], b["fullname"] = (b[k].replace("-repeat1", "") for k in ("name", "fullname"))
    b["stats"]["rounds"] = 3
    b["extra_info"]["repeat_p50_us"] = claimed
    return b


def test_a_single_run_claiming_repeats_cannot_call_a_move(tmp_path):
    # extra_info.repeat_p50_us is what merging a figure's repeats writes: a file's own is dropped
    old = _file(tmp_path / "a.json", [_single(10.0, [10.0, 10.1, 10.2])])
    new = _file(tmp_path / "b.json", [_single(13.0, [13.0, 13.1, 13.2])])
    (o,), (n,) = load_bench(old)[0], load_bench(new)[0]
    assert (o.repeats, o.repeat_p50s, n.repeats, n.repeat_p50s) == (1, (), 1, ())
    assert moved([o], [n]) == []  # one run a side, 3 rounds: too few to call a move


def test_one_run_copied_as_three_repeats_cannot_call_a_move(tmp_path, capsys):
    def copies(us, renumber):
        return [dict(_bench("triton", "eager", 64, us, i if renumber else 1), stats=dict(
            _bench("triton", "eager", 64, us, 1)["stats"], rounds=3)) for i in (1, 2, 3)]

    # all repeat 1: not one run's file (one entry per test id), refused with the file
    old = _file(tmp_path / "a.json", copies(10.0, renumber=False))
    with pytest.raises(BenchError, match=r"test_plan\[triton-eager-64-reused-serving\]: repeat 1 "
                       "appears 3 times"):
        load_bench(old)
    # renumbered 1, 2, 3: identical statistics are one measurement, and the figure is refused
    old = _file(tmp_path / "a.json", copies(10.0, renumber=True))
    new = _file(tmp_path / "b.json", copies(13.0, renumber=True))
    (o,), (n,) = load_bench(old)[0], load_bench(new)[0]
    assert o.refused == n.refused == ("repeats 1 and 2 hold identical statistics: one "
                                      "measurement copied, not two repeats")
    assert moved([o], [n]) == []
    _, text = _compare_text(capsys, old, new)
    assert "1 refused in both" in text and "identical statistics" in text
    # an honest file of three repeats (their statistics differ) still reads as three, and a NEW
    # copied from one run against it is a regression, never "none judged" in silence
    honest = _file(tmp_path / "c.json", [_bench("triton", "eager", 64, us, i)
                                         for i, us in enumerate((10.0, 10.1, 10.2), 1)])
    assert [r.repeats for r in load_bench(honest)[0]] == [3]
    _, text = _compare_text(capsys, honest, new)
    assert text.splitlines()[2].startswith("1 regression(s): 1 benchmark figure(s) refused in NEW")


def test_a_forged_repeat_count_in_conformance_goals_does_not_change_what_compare_judges(
        tmp_path, capsys):
    # the top-level "repeats" is not what compare reads: one run a side stays one run a side
    one = [_single(10.0, [])]
    old = _file(tmp_path / "a.json", one, conformance_goals={"repeats": 9, "goals": []})
    new = _file(tmp_path / "b.json", [_single(13.0, [])],
                conformance_goals={"repeats": 9, "goals": []})
    assert cli_main(["report", "--compare", str(old), str(new), "--format", "text"]) == 0
    text = capsys.readouterr().out
    assert "benchmarks: none of 1 figure(s) judged (repeats: old 1, new 1; rounds: old 3, new 3" \
        in text


HOSTILE = "<img src=x onerror=alert(1)>|**bold**"


def _moved_pair(tmp_path: Path, planner: str, scenario: str) -> tuple[Path, Path]:
    def side(name, base):
        out = []
        for i, us in enumerate((base, base + 0.5, base + 1.0), 1):
            b = _bench(planner, "eager", 64, us, i, scenario)
            out.append(b)
        return _file(tmp_path / name, out)
    return side("a.json", 10.0), side("b.json", 20.0)


def test_a_hostile_planner_name_is_text_in_the_compare_markdown_and_html(tmp_path, capsys):
    old, new = _moved_pair(tmp_path, f"m:{HOSTILE}", "reused")
    assert cli_main(["report", "--compare", str(old), str(new), "--format", "markdown"]) == 0
    md = capsys.readouterr().out
    row = next(ln for ln in md.splitlines() if "onerror" in ln)
    assert "`m:<img src=x onerror=alert(1)>\\|**bold**`" in row  # one code span, | escaped
    page = tmp_path / "c.html"
    assert cli_main(["report", "--compare", str(old), str(new), "--out", str(page)]) == 0
    html = page.read_text()
    assert "<img" not in html and "&lt;img src=x onerror=alert(1)&gt;" in html


def test_a_hostile_scenario_is_text_in_the_compare_markdown(tmp_path, capsys):
    old, new = _moved_pair(tmp_path, "triton", HOSTILE)
    assert cli_main(["report", "--compare", str(old), str(new), "--format", "markdown"]) == 0
    md = capsys.readouterr().out
    lines = [ln for ln in md.splitlines() if "onerror" in ln]
    assert lines and all("<img" not in re.sub(r"(`+).*?\1", "", ln) for ln in lines), lines
    assert "`<img src=x onerror=alert(1)>\\|**bold**`" in lines[0]  # one code span, | escaped
    # a figure only in one file and a refused one: their cells (and the figure's key) too
    one_only = _file(tmp_path / "c.json", [
        _bench("triton", "eager", 64, 20.0 + i, i, HOSTILE, refused_why=HOSTILE if i == 2 else None)
        for i in (1, 2, 3)] + [_bench(f"m:{HOSTILE}", "eager", 8, 5.0 + i, i) for i in (1, 2, 3)])
    assert cli_main(["report", "--compare", str(old), str(one_only), "--format", "markdown"]) == 0
    md = capsys.readouterr().out
    assert "refused in NEW" in md and "only in NEW" in md
    for ln in md.splitlines():
        assert "<img" not in re.sub(r"(`+).*?\1", "", ln), ln
    page = tmp_path / "c.html"
    assert cli_main(["report", "--compare", str(old), str(one_only), "--out", str(page)]) == 0
    html = page.read_text()
    assert "<img" not in html and html.count("&lt;img src=x onerror=alert(1)&gt;") >= 3


def _compare_text(capsys, old: Path, new: Path) -> tuple[int, str]:
    code = cli_main(["report", "--compare", str(old), str(new), "--format", "text"])
    return code, capsys.readouterr().out


def test_compare_says_when_a_figure_is_refused_in_one_repeat_of_new(tmp_path, capsys):
    old = _file(tmp_path / "a.json", [_bench("triton", "eager", 64, us, i)
                                      for i, us in enumerate((10.0, 10.5, 11.0), 1)])
    new = _file(tmp_path / "b.json", [
        _bench("triton", "eager", 64, us, i, refused_why="outputs wrong" if i == 2 else None)
        for i, us in enumerate((20.0, 20.5, 21.0), 1)])
    code, text = _compare_text(capsys, old, new)
    assert code == 0 and "none of 0 figure(s) judged" in text  # no pair left to judge
    assert text.splitlines()[2].startswith("1 regression(s): 1 benchmark figure(s) refused in NEW")
    row = next(ln for ln in text.splitlines() if ln.startswith("NEW "))
    assert row.split()[1:5] == ["triton", "eager", "reused", "64"] and "outputs wrong" in row
    assert cli_main(["report", "--compare", str(old), str(new), "--format", "text",
                     "--fail-on-regression"]) == 1  # a CI gate fails on it
    capsys.readouterr()
    code, text = _compare_text(capsys, new, old)  # refused in OLD only: said, no regression
    assert "regression" not in text and "1 figure(s) refused in OLD" in text


def test_compare_says_when_a_figure_of_old_is_missing_from_new(tmp_path, capsys):
    old = _file(tmp_path / "a.json", [_bench("triton", "eager", bs, us + i / 10, i)
                                      for bs, us in ((8, 5.0), (64, 10.0)) for i in (1, 2, 3)])
    new = _file(tmp_path / "b.json", [_bench("triton", "eager", 8, 5.0 + i / 10, i)
                                      for i in (1, 2, 3)])
    _, text = _compare_text(capsys, old, new)
    assert "0 benchmark figure(s) moved beyond their noise (1 of 1 judged;" in text  # bs 8 only
    assert text.splitlines()[2].startswith(
        "1 regression(s): 1 benchmark figure(s) of OLD missing from NEW")
    assert "Benchmark figures only in OLD (missing from NEW) (1)" in text
    row = next(ln for ln in text.splitlines() if "test_plan[triton-eager-64-reused-serving]" in ln)
    assert row.split()[:4] == ["triton", "eager", "reused", "64"], row
    assert cli_main(["report", "--compare", str(old), str(new), "--format", "text",
                     "--fail-on-regression"]) == 1
    capsys.readouterr()
    _, text = _compare_text(capsys, new, old)  # a figure NEW adds: named, no regression
    assert "regression" not in text and "only in NEW" in text


def test_a_round_timer_that_reads_nan_is_refused():
    from conformance.bench import clocks

    clock = clocks.RoundClock(clocks.perf_counter)
    ms = 1e-3
    for _ in range(4):  # one round: timer and bracket readings at its start and end
        clock.values += [0.0, float("nan")]
        clock.wall_ns += [0, int(ms * 1e9)]
    stored = [float("nan")] * 3  # what pytest-benchmark stores: 1 warm-up round, 3 timed
    reason = clocks.loop_mismatch(clock, stored, 1, int(10 * ms * 1e9), host_timed=True)
    assert reason == ("statistics: round 0 is nan s by the bench's clock: not a finite, "
                      "non-negative time"), reason
    for bad in (float("inf"), -ms):  # an infinite or negative round: no time either
        clock.values = [0.0, ms] * 3 + [0.0, bad]
        assert (clocks.loop_mismatch(clock, [ms] * 3, 1, int(10 * ms * 1e9), host_timed=True)
                or "").startswith(f"statistics: round 3 is {bad!r} s by the bench's clock"), bad
    # replay (device time: no per-round wall check) and the stored figures alone are judged too
    clock.values = [0.0, ms] * 4
    assert clocks.loop_mismatch(clock, [ms] * 3, 1, int(10 * ms * 1e9), host_timed=True) is None
    for host_timed in (True, False):
        reason = clocks.loop_mismatch(clock, [ms] * 2 + [float("nan")], 1, int(10 * ms * 1e9),
                                      host_timed=host_timed)
        assert reason == ("statistics: round 2 is nan s by the results: not a finite, "
                          "non-negative time"), reason
