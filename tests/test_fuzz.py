"""The differential fuzzer: plans are valid and varied, the shrinker's steps work,
and a planted bug is found, shrunk to 3 requests and written as a case that fails the suite on the
planted planner while the pure-Python planner passes it. Found cases go to tmp dirs, never cases/."""

from __future__ import annotations

import io
import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conformance.corpus.loader import load_corpus
from conformance.cli import main as cli_main
from conformance.robustness.found_cases import found_id
from conformance.robustness.fuzz import fuzz
from conformance.robustness.fuzz_jobs import check_plans
from conformance.robustness.plan_divergence import with_golden
from conformance.robustness.random_plans import random_plan, verify_total
from conformance.robustness.progress import Progress
from conformance.robustness.shrink import shrink
from impls.offsets_planner.constants import PLAN_BS_BLOCK_SIZE
from tests.subproc import REPO, run_pytest

PLANTED = "tests.planted.fuzz_planners:planted"


def test_plans_are_deterministic_valid_and_cover_the_space():
    plans = [random_plan(7, i) for i in range(300)]
    assert random_plan(7, 11) == plans[11] and random_plan(8, 11) != plans[11]
    seen = set()
    for plan in plans:
        inp = plan["inputs"]
        bs, table, lut = len(inp["req_pool_indices"]), inp["req_to_token"], inp["lut"]
        assert 0 <= bs <= PLAN_BS_BLOCK_SIZE and inp.get("write_req_capacity", bs) >= bs
        assert inp["swa_window_size"] <= 0 or lut is not None
        expect = with_golden(plan)[1]["expect"]
        assert "error" not in expect, (plan["id"], expect)  # valid under spec section 4
        cols = table["max_seq_len"]
        for row, p, e in zip(inp["req_pool_indices"], inp["prefix_lens"], inp["extend_seq_lens"]):
            seen.add("padding" if row == 0 else "live")
            if row != 0 and (row < 0 or row >= table["max_reqs"]):
                seen.add("row out of range")
            if row == table["max_reqs"] - 1 and p > cols:
                seen.add("past the last row")
            if row != 0 and p > cols:
                seen.add("prefix past row")
            if row != 0 and (p < 0 or e < 0):
                seen.add("negative length")
            if p >= 1 << 40:
                seen.add("int64 prefix")
        if any(v < 0 for _, _, v in table.get("set", ())):
            seen.add("negative slot")
        seen.add(f"lut={lut is not None}")
        seen.add("window>0" if inp["swa_window_size"] > 0 else "window<=0")
        total = verify_total(inp["req_pool_indices"], inp["prefix_lens"], inp["swa_window_size"])
        if inp["verify_capacity"] in (total - 1, total) and total > 0:
            seen.add("capacity at the total")
        if bs > 1000:
            seen.add("large bs")
    assert seen >= {"padding", "live", "row out of range", "past the last row", "prefix past row",
                    "negative length", "int64 prefix", "negative slot", "lut=True", "lut=False",
                    "window>0", "window<=0", "capacity at the total", "large bs"}


def test_shrink_named_steps_reach_the_minimal_plan():
    plan = random_plan(1, 0)
    plan["inputs"].update(req_pool_indices=[1, 0, 2, 3, 1], prefix_lens=[5000, 3, 2, 900, 7],
                          extend_seq_lens=[4, 1, 1, 2, 9])

    def fails(raw):  # "diverges" whenever some prefix exceeds 100
        return any(p > 100 for p in raw["inputs"]["prefix_lens"])

    small, steps = shrink(plan, fails)
    inp = small["inputs"]
    assert len(inp["req_pool_indices"]) == 1 and inp["extend_seq_lens"] == [0]
    assert 100 < inp["prefix_lens"][0] <= 200 and inp["req_pool_indices"] == [0]
    assert inp["lut"] is None and inp["swa_window_size"] == 0
    assert inp["req_to_token"] == {"generator": "linear", "max_reqs": 1, "max_seq_len": 1}
    assert steps[0] == "drop requests" and "halve lengths" in steps and "zero values" in steps


def test_progress_bar_prints_deciles_off_a_terminal():
    out = io.StringIO()
    with Progress(50, "fuzz", stream=out) as bar:
        for _ in range(50):
            bar.update(note="x:0")
    lines = out.getvalue().splitlines()
    assert len(lines) == 10 and lines[-1].startswith("fuzz [" + "#" * 30 + "] 50/50")


@pytest.mark.slow  # a fuzz run and a pytest run, about 17 s on 2 cores
def test_planted_bug_is_found_shrunk_and_fails_the_suite(tmp_path: Path):
    out = tmp_path / "found"
    logged: list[str] = []
    result = fuzz([PLANTED, "python"], n=30, seed=3, out=out, max_found=1, progress=False,
                  log=logged.append)
    assert result.plans == 30 and result.divergences["python"] == 0
    assert result.divergences[PLANTED] > 0 and len(result.written) == 1
    path = result.written[0]
    assert path.parent == out and re.fullmatch(  # the id is a hash of the plan written
        r"found-tests-planted-fuzz-planners-planted-[0-9a-f]{12}\.json", path.name)
    assert path.stem == found_id(PLANTED, json.loads(path.read_text()))
    assert f"pytest conformance/ --planner {PLANTED} --cases " in logged[0]
    assert f"--case {path.stem}" in logged[0]
    cases, errors = load_corpus([out])
    assert errors == [] and [c.id for c in cases] == [path.stem]
    case = cases[0]
    rpi, prefix = case.inputs["req_pool_indices"], case.inputs["prefix_lens"]
    assert len(rpi) == 3  # the planted bug needs bs >= 3: shrunk to the minimum
    assert case.inputs["lut"] is not None and any(p > 7 for p in prefix)
    assert case.needs_review and case.source["kind"] == "fuzz" and "--seed 3" in case.source["ref"]
    assert "fuzz" in case.tags and "found" in case.tags

    proc, items = run_pytest(tmp_path, "--cases", str(out), "--planner", "python",
                             "--planner", PLANTED)
    assert proc.returncode == 1, proc.stdout[-2000:]
    assert items[f"{path.stem}[python]"].outcome == "passed"
    planted = items[f"{path.stem}[{PLANTED}]"]
    assert planted.outcome == "failed"
    assert "out_write_seed_slot_indices: 1 element(s) differ" in planted.text


def test_shrinking_stops_after_max_found_repeats_in_a_row(tmp_path: Path, monkeypatch):
    """Every divergence of one bug shrinking to the same plan: after the first, ``max_found``
    shrinks in a row give it again, and the later divergences are counted, not shrunk."""
    import conformance.robustness.fuzz as fuzz_module

    calls: list[dict] = []

    def same_plan(plan, fails, budget):  # the first divergence's real shrink, then its plan
        if not calls:
            calls.append(shrink(plan, fails, budget=budget))
        else:
            calls.append(calls[0])
        return calls[-1]

    monkeypatch.setattr(fuzz_module, "shrink", same_plan)
    logged: list[str] = []
    result = fuzz([PLANTED], n=30, seed=3, out=tmp_path / "found", max_found=2,
                  progress=False, log=logged.append)
    assert result.divergences[PLANTED] > 4  # more divergences than were shrunk
    assert len(calls) == 3 and len(result.written) == 1
    assert logged[-1] == (f"divergence: {PLANTED}: 2 shrinks in a row gave a plan already "
                          "found; its later divergences are counted, not shrunk")


def test_cli_fuzz_prints_the_one_line_summary(tmp_path: Path, capsys):
    code = cli_main(["fuzz", "--planner", "python", "--n", "5", "--seed", "2", "--no-progress",
                     "--out", str(tmp_path)])
    lines = capsys.readouterr().out.splitlines()
    assert code == 0 and len(lines) == 1
    assert re.fullmatch(r"fuzz seed 2: 5 plans; divergences: python \(cpu\) 0; \d+\.\d s", lines[0])
    assert list(tmp_path.iterdir()) == []


def test_check_plans_reports_the_divergent_plans_of_a_chunk():
    checked = check_plans((PLANTED, "python"), 2, [0, 1, 2])
    assert [index for index, _ in checked] == [0, 1, 2]
    assert [sorted(failures) for _, failures in checked] == [[], [PLANTED], []]
    assert "out_write_seed_slot_indices: 1 element(s) differ" in checked[1][1][PLANTED]


def _fuzz_run(tmp_path: Path, planner: str, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "conformance", "fuzz", "--planner", planner,
                           "--no-progress", "--max-found", "0", "--out", str(tmp_path / "found"),
                           *args], cwd=REPO, capture_output=True, text=True, timeout=600)


@pytest.mark.slow  # four fuzz runs of 120 plans, about 60 s on 2 cores
@pytest.mark.parametrize("isolate", [[], ["--isolate"]])
def test_jobs_find_what_one_process_finds(tmp_path, isolate):
    """``--jobs 2`` (conformance/robustness/fuzz_jobs.py) counts the same divergences as one
    process, plan for plan: its chunks come back in order, the late records of each job's
    workers included."""
    counts = []
    for jobs in ("1", "2"):
        proc = _fuzz_run(tmp_path / jobs, PLANTED, "--n", "120", "--seed", "3", "--jobs", jobs,
                         *isolate)
        found = re.search(r"divergences: \S+ \(external\) (\d+);", proc.stdout)
        assert proc.returncode in (0, 1) and found, proc.stdout + proc.stderr[-3000:]
        counts.append((proc.returncode, int(found.group(1))))
    assert counts[0] == counts[1] and counts[0][1] > 0, counts


def _spawned_children(pid: int) -> list[int]:
    """The children of ``pid`` that multiprocessing's ``spawn`` started (fuzz's job processes)."""
    out = []
    for entry in Path("/proc").iterdir():
        try:
            stat = (entry / "stat").read_text()
            cmdline = (entry / "cmdline").read_bytes()
        except (OSError, ValueError):
            continue
        if int(stat.rsplit(")", 1)[1].split()[1]) == pid and b"spawn_main" in cmdline:
            out.append(int(entry.name))
    return out


@pytest.mark.slow  # a fuzz run over two jobs, about 15 s on 2 cores
def test_a_job_process_that_dies_is_an_error_not_a_hang_or_a_green_run(tmp_path):
    """A job process of ``--jobs 2`` killed mid-run (SIGKILL, from outside: the OOM killer, say)
    makes the run exit 2 with the reason, never 0 and never a wait for a reply that cannot come
    (conformance/robustness/fuzz_jobs.py)."""
    proc = subprocess.Popen([sys.executable, "-m", "conformance", "fuzz", "--planner", "python",
                             "--n", "100000", "--jobs", "2", "--no-progress",
                             "--out", str(tmp_path / "found")],
                            cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 120
        while len(jobs := _spawned_children(proc.pid)) < 2 and time.monotonic() < deadline:
            time.sleep(0.2)
        assert len(jobs) == 2, jobs
        time.sleep(3)  # both at work
        os.kill(jobs[0], signal.SIGKILL)
        out, err = proc.communicate(timeout=120)
    finally:
        proc.kill()
    assert proc.returncode == 2, out + err[-3000:]
    assert "a job's process ended (exit code -9) before it replied" in err
