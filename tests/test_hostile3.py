"""A hostile entrant's attacks on what the sandbox keeps and on what runs outside it (planners in
``tests/planted/hostile3_attacks.py``, ``hostile3_fuzz.py``, ``hostile3_fuzz_same_run.py``,
``hostile3_green_run.py``), each with the verdict the harness should give. A strict xfail is an
attack that still fools the harness (its reason names the hole).

The attacks write files, so every run here is on a copy of the checkout under ``tmp_path`` (code,
corpus and planted planners, never this checkout's files), from one module-scoped fixture on five
copies, run side by side: two ``pytest conformance/`` runs on each of copies a and b (the second
judged by what the first left on disk), one run on copy e (judged green by what its own probe
planted), ``python -m conformance fuzz --jobs 2`` on copy c and ``fuzz`` (one job) on copy d; then
``python -m conformance report --strict`` of b's second run."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
ATTACKS = "tests.planted.hostile3_attacks"
VALID, INVALID = "spec7-no-prefix", "err-not-1d-req-pool-indices-2d"
FIRST = [f"{ATTACKS}:edits_case_file", f"{ATTACKS}:right_when_named", f"{ATTACKS}:forges_raise"]
SKIP = shutil.ignore_patterns(".git", ".venv", "__pycache__", "*.egg-info", "upstream", "gpu",
                              "out", "node_modules")


def _copy(tmp: Path, name: str) -> Path:
    tree = tmp / name
    shutil.copytree(REPO, tree, ignore=SKIP)
    return tree


def _env(tree: Path) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in (
        "PYTEST_ADDOPTS", "PYTEST_XDIST_WORKER", "PYTEST_CURRENT_TEST")}
    env["PYTHONPATH"] = str(tree)
    return env


def _pytest(tree: Path, results: Path, planners: list[str], cases: list[str],
            *more: str) -> subprocess.Popen:
    args = [a for p in planners for a in ("--planner", p)] + \
        [a for c in cases for a in ("--case", c)] + list(more)
    return subprocess.Popen(
        [sys.executable, "-m", "pytest", "conformance/", "-p", "no:cacheprovider", "-q",
         "--results", str(results), "--isolate-timeout", "30", *args],
        cwd=tree, env=_env(tree), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def _done(proc: subprocess.Popen) -> tuple[int, str]:
    out, _ = proc.communicate(timeout=300)
    return proc.returncode, out


def _status(results: Path) -> dict[str, str]:
    data = json.loads(results.read_text())
    assert data["complete"] is True
    return {r["id"]: r["status"] for r in data["results"]}


@pytest.fixture(scope="module")
def attacked(tmp_path_factory):
    """{run name: (exit status, output, {item id: status} or None)}, see the module docstring."""
    tmp = tmp_path_factory.mktemp("hostile3")
    a, b, c, d, e = (_copy(tmp, n) for n in ("a", "b", "c", "d", "e"))
    first = {
        "a1": _pytest(a, tmp / "a1.json", FIRST, [VALID, INVALID]),
        "b1": _pytest(b, tmp / "b1.json", [f"{ATTACKS}:plants_judge_bytecode"], [VALID]),
        "fuzz": subprocess.Popen(
            [sys.executable, "-m", "conformance", "fuzz", "--planner",
             "tests.planted.hostile3_fuzz:launch", "--n", "2", "--seed", "1", "--jobs", "2",
             "--out", str(tmp / "found"), "--no-progress"],
            cwd=c, env=_env(c), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True),
        "e1": _pytest(e, tmp / "e1.json", ["tests.planted.hostile3_green_run:launch"], [VALID],
                      f"--junitxml={tmp / 'e1.xml'}"),
        "fuzz_same_run": subprocess.Popen(
            [sys.executable, "-m", "conformance", "fuzz", "--planner",
             "tests.planted.hostile3_fuzz_same_run:launch", "--n", "2", "--seed", "1",
             "--out", str(tmp / "found-d"), "--no-progress"],
            cwd=d, env=_env(d), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True),
    }
    runs = {name: _done(proc) for name, proc in first.items()}
    second = {
        "a2": _pytest(a, tmp / "a2.json", [f"{ATTACKS}:edits_case_file"], [VALID]),
        "b2": _pytest(b, tmp / "b2.json", [f"{ATTACKS}:plants_judge_bytecode"], [VALID]),
    }
    runs.update({name: _done(proc) for name, proc in second.items()})
    report = subprocess.run([sys.executable, "-m", "conformance", "report", str(tmp / "b2.json"),
                             "--format", "text", "--strict"], cwd=b, env=_env(b),
                            capture_output=True, text=True, timeout=120)
    runs["report"] = (report.returncode, report.stdout + report.stderr)
    runs["junit_e1"] = (0, (tmp / "e1.xml").read_text() if (tmp / "e1.xml").exists() else "")
    statuses = {name: _status(tmp / f"{name}.json") if (tmp / f"{name}.json").exists() else None
                for name in runs}
    trees = {"a": a, "b": b, "c": c, "d": d, "e": e}
    return {name: (*runs[name], statuses[name]) for name in runs}, trees


def _item(case: str, planner: str) -> str:
    return f"{case}[{ATTACKS}:{planner}]"


# ---- caught ------------------------------------------------------------------------------------


def test_a_planner_right_only_when_the_worker_names_a_test_fails(attacked):
    """The worker's environment carries no ``PYTEST_CURRENT_TEST`` (nor any case id)."""
    runs, _ = attacked
    code, out, status = runs["a1"]
    assert status[_item(VALID, "right_when_named")] == "fail", out[-3000:]
    assert code == 1


def test_the_run_that_edits_a_case_file_or_plants_bytecode_fails_itself(attacked):
    runs, _ = attacked
    assert runs["a1"][2][_item(VALID, "edits_case_file")] == "fail", runs["a1"][1][-3000:]
    assert runs["b1"][2][_item(VALID, "plants_judge_bytecode")] == "fail", runs["b1"][1][-3000:]
    assert runs["b1"][0] == 1


def test_the_attacks_did_reach_the_disk_of_their_copy(attacked):
    """What the next run is judged by (the copy's files, never this checkout's)."""
    _, trees = attacked
    case_file = json.loads((trees["a"] / "cases/spec/section7-examples.json").read_text())
    edited = next(c for c in case_file["cases"] if c["id"] == VALID)
    assert edited["expect"]["out_write_num_valid_reqs"] == 2  # the spec's golden is 1
    source = trees["b"] / "conformance/engine/judge.py"
    assert source.read_bytes() == (REPO / "conformance/engine/judge.py").read_bytes()
    planted = sorted((source.parent / "__pycache__").glob("judge.*.pyc"))
    assert len(planted) == 2  # CPython's and pytest's assertion-rewrite cache
    assert all(b"a judge that never fails" in p.read_bytes() for p in planted)
    assert "hostile3: reference edited" in (trees["c"] / "impls/python_planner.py").read_text()
    isolated_case = trees["d"] / "conformance/robustness/isolated_case.py"
    assert isolated_case.read_bytes() == (REPO / "conformance/robustness/isolated_case.py"
                                          ).read_bytes()
    pyc = isolated_case.parent / "__pycache__" / f"isolated_case.{sys.implementation.cache_tag}.pyc"
    assert b"a judge_observed that finds nothing" in pyc.read_bytes()


def test_the_green_run_still_prints_its_failure_on_the_terminal(attacked):
    """The planted terminal-summary code runs after the conformance summary was printed."""
    runs, _ = attacked
    code, out, _ = runs["e1"]
    assert f"FAILED conformance/test_corpus.py::{VALID}[tests.planted.hostile3_green_run:launch]" \
        in out, out[-3000:]


# ---- still open --------------------------------------------------------------------------------


@pytest.mark.xfail(strict=True, reason="the worker's exception report is built in the planner's "
                   "process (Raised.of there): patched, a RuntimeError is recorded as the "
                   "documented ValueError and the error case passes")
def test_a_forged_exception_record_fails_the_error_case(attacked):
    runs, _ = attacked
    assert runs["a1"][2][_item(INVALID, "forges_raise")] == "fail"


@pytest.mark.xfail(strict=True, reason="the sandbox keeps the filesystem: a worker rewrites the "
                   "case file's golden on disk, and the next run loads and judges by it (no "
                   "digest of the corpus is checked)")
def test_a_golden_edited_on_disk_by_the_last_run_still_fails(attacked):
    runs, _ = attacked
    code, out, status = runs["a2"]
    assert status[_item(VALID, "edits_case_file")] == "fail", out[-3000:]


@pytest.mark.xfail(strict=True, reason="the sandbox keeps the filesystem: a worker writes the "
                   "harness's __pycache__ (source mtime and size in the header, the .py "
                   "untouched), the next run imports a judge that never fails")
def test_a_judge_planted_in_bytecode_by_the_last_run_still_fails(attacked):
    runs, _ = attacked
    code, out, status = runs["b2"]
    assert status[_item(VALID, "plants_judge_bytecode")] == "fail", out[-3000:]
    assert code == 1


@pytest.mark.xfail(strict=True, reason="report --strict checks the commit and planner sources, "
                   "not the harness's loaded bytecode: a run judged by planted bytecode is "
                   "reported green, exit 0")
def test_report_refuses_a_run_judged_by_planted_bytecode(attacked):
    runs, _ = attacked
    code, out, _ = runs["report"]
    assert code != 0 or "0 not passing" not in out, out[-2000:]


@pytest.mark.xfail(strict=True, reason="fuzz's golden process under --jobs starts after the "
                   "planner's module ran in the probe: the module edits impls/python_planner.py "
                   "on disk and the goldens agree with the wrong planner (0 divergences, exit 0)")
def test_fuzz_finds_a_planner_that_edits_the_reference_on_disk(attacked):
    runs, _ = attacked
    code, out, _ = runs["fuzz"]
    assert code == 1 and "divergences: tests.planted.hostile3_fuzz:launch (external) 0" \
        not in out, out[-2000:]


@pytest.mark.xfail(strict=True, reason="the probe runs the planner's module (its sandbox keeps the "
                   "filesystem) before fuzz imports conformance.robustness.isolated_case (lazily, on the first plan): "
                   "its planted bytecode's judge_observed finds nothing, in that same run")
def test_fuzz_finds_a_planner_that_plants_the_fuzzers_judge_in_the_same_run(attacked):
    runs, _ = attacked
    code, out, _ = runs["fuzz_same_run"]
    assert "divergences: tests.planted.hostile3_fuzz_same_run:launch (external) 0" not in out, \
        out[-2000:]
    assert code == 1


@pytest.mark.xfail(strict=True, reason="the probe runs the planner's module during collection (its "
                   "sandbox keeps the filesystem), before pytest imports conformance.bench.goals (lazily, in the "
                   "bench plugin's terminal summary of every run): its planted bytecode runs in "
                   "pytest and rewrites the results, the JUnit XML and the exit status to green")
def test_a_run_whose_planner_plants_the_terminal_summary_still_fails(attacked):
    runs, _ = attacked
    code, out, status = runs["e1"]
    junit = runs["junit_e1"][1]
    assert status[f"{VALID}[tests.planted.hostile3_green_run:launch]"] == "fail", out[-3000:]
    assert "<failure" in junit
    assert code == 1
