"""A hostile entrant's attacks on what the sandbox keeps and on what runs outside it (planners in
``tests/planted/hostile3_attacks.py``, ``hostile3_fuzz.py``, ``hostile3_fuzz_same_run.py``,
``hostile3_green_run.py``), each with the verdict the harness should give. A strict xfail is an
attack that still fools the harness (its reason names the hole). The filesystem attacks (a case
file's golden rewritten, the harness's bytecode planted, the reference edited, for the next run or
for a module pytest imports later in the same run) are refused where the probe and the workers
run in the sandbox, whose checkout and interpreter folders are read-only; without it (CUDA, or a
kernel that refuses the namespaces) they are open, and their tests are strict xfails there.

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

from tests.test_sandbox import SANDBOXED as SANDBOX_HERE

pytestmark = pytest.mark.slow  # five checkout copies, six whole runs and two fuzz runs: about 50 s on 2 cores
REPO = Path(__file__).resolve().parent.parent
SANDBOXED = SANDBOX_HERE
open_without_sandbox = pytest.mark.xfail(
    not SANDBOXED, strict=True, reason="no sandbox for this run's workers and probe (the kernel "
    "refused the namespaces, or CUDA): they keep write access to the checkout, so case files, "
    "the reference and the harness's bytecode can be rewritten on disk")
needs_sandbox = pytest.mark.skipif(not SANDBOXED, reason="the checkout is read-only only in the "
                                   "sandbox")
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


def _status(results: Path) -> dict[str, str] | None:
    """{item id: status} of a finished run; None when the run did not finish (a usage error)."""
    data = json.loads(results.read_text())
    if data["complete"] is not True:
        return None
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


@needs_sandbox
def test_the_attacks_never_reach_the_disk_of_their_copy(attacked):
    """The sandbox makes the checkout read-only for the probe and the workers: the copies' case
    file, harness bytecode and reference are as they were (each write failed with EROFS)."""
    runs, trees = attacked
    spec7 = "cases/offsets-planner/spec/section7-examples.json"
    assert (trees["a"] / spec7).read_bytes() == (REPO / spec7).read_bytes()
    for tree, module, marker in ((trees["b"], "conformance/engine/judge.py",
                                  b"a judge that never fails"),
                                 (trees["d"], "conformance/robustness/isolated_case.py",
                                  b"a judge_observed that finds nothing"),
                                 (trees["e"], "conformance/bench/goals.py", b"hostile3")):
        cache = (tree / module).parent / "__pycache__"
        stem = Path(module).stem
        assert not any(marker in p.read_bytes() for p in cache.glob(f"{stem}.*.pyc")), module
    reference = trees["c"] / "impls/offsets_planner/python_planner.py"
    assert reference.read_bytes() == (REPO / "impls/offsets_planner/python_planner.py").read_bytes()
    for run in ("a1", "b1", "a2", "b2"):
        assert "Read-only file system" in runs[run][1], run


def test_the_green_run_still_prints_its_failure_on_the_terminal(attacked):
    """Unsandboxed, the planted terminal-summary code runs after the conformance summary was
    printed; in the sandbox the module cannot plant it and the run stops with a usage error."""
    runs, _ = attacked
    code, out, status = runs["e1"]
    if SANDBOXED:
        assert code == 4 and status is None, out[-3000:]
        assert "cannot import 'tests.planted.hostile3_green_run'" in out
        assert "Read-only file system" in out
    else:
        assert f"FAILED conformance/test_corpus.py::{VALID}[tests.planted.hostile3_green_run:" \
            "launch]" in out, out[-3000:]


# ---- still open --------------------------------------------------------------------------------


@pytest.mark.xfail(strict=True, reason="the worker's exception report is built in the planner's "
                   "process (Raised.of there): patched, a RuntimeError is recorded as the "
                   "documented ValueError and the error case passes. Open by design: the "
                   "exception exists only in that process, and every byte of its record (Raised.of, "
                   "the reply's JSON, the reply fd) is the planner's to rewrite; a pickled "
                   "exception checked in the judge would be the validator's real ValueError")
def test_a_forged_exception_record_fails_the_error_case(attacked):
    runs, _ = attacked
    assert runs["a1"][2][_item(INVALID, "forges_raise")] == "fail"


@open_without_sandbox
def test_a_golden_edited_on_disk_by_the_last_run_still_fails(attacked):
    runs, _ = attacked
    code, out, status = runs["a2"]
    assert status[_item(VALID, "edits_case_file")] == "fail", out[-3000:]


@open_without_sandbox
def test_a_judge_planted_in_bytecode_by_the_last_run_still_fails(attacked):
    runs, _ = attacked
    code, out, status = runs["b2"]
    assert status[_item(VALID, "plants_judge_bytecode")] == "fail", out[-3000:]
    assert code == 1


@open_without_sandbox
def test_report_refuses_a_run_judged_by_planted_bytecode(attacked):
    runs, _ = attacked
    code, out, _ = runs["report"]
    assert code != 0 or "0 not passing" not in out, out[-2000:]


@open_without_sandbox
def test_fuzz_finds_a_planner_that_edits_the_reference_on_disk(attacked):
    runs, _ = attacked
    code, out, _ = runs["fuzz"]
    assert code in (1, 2) and "divergences: tests.planted.hostile3_fuzz:launch (external) 0" \
        not in out, out[-2000:]
    assert code == 1 or "Read-only file system" in out  # 2: its module could not edit the disk


@open_without_sandbox
def test_fuzz_finds_a_planner_that_plants_the_fuzzers_judge_in_the_same_run(attacked):
    runs, _ = attacked
    code, out, _ = runs["fuzz_same_run"]
    assert "divergences: tests.planted.hostile3_fuzz_same_run:launch (external) 0" not in out, \
        out[-2000:]
    assert code == 1 or (code == 2 and "Read-only file system" in out)


@open_without_sandbox
def test_a_run_whose_planner_plants_the_terminal_summary_still_fails(attacked):
    runs, _ = attacked
    code, out, status = runs["e1"]
    junit = runs["junit_e1"][1]
    if code == 4:  # its module could not plant anything: a usage error, no results
        assert status is None and "Read-only file system" in out, out[-3000:]
        return
    assert status[f"{VALID}[tests.planted.hostile3_green_run:launch]"] == "fail", out[-3000:]
    assert "<failure" in junit
    assert code == 1
