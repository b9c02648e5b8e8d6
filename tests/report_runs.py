"""Real ``pytest conformance/`` runs on the tiny corpus of ``tests/data/report-cases``, shared by
``tests/test_report.py`` and ``tests/test_browser.py`` (each run once per test process).

Planners: ``python`` and ``tests.planted.report_planners:configurable`` (its bug set per run):

* ``a``: ``common`` + ``old-only`` cases, the off-by-one scan: 6 failures, 1 declared xfail;
* ``b``: ``common`` + ``new-only`` cases under ``-n 2``, the wrong error message: 2 failures,
  and the worker exits on the padding-row case (pytest-xdist reports it crashed);
* ``c``: ``common`` cases, the process exits on the first batch of three (a killed run);
* ``d``: a few cases of the repo's corpus (:data:`VERDICT_CASES`: the ``err-steps-*-between-valid``
  cases, a plain error case, ``hazard-prefix-past-row``) on two other planners whose single bug is
  known: :data:`SEED` (a seed one too large on a valid request; declared on one case by
  ``tests/data/report-verdicts/seed-plus-one.json``) and :data:`PAST_ROW` (reads past the row, so
  it ``differs`` from the project rule ``past-row``).

Runs ``b`` and ``c`` load ``tests.planted.ends_pytest``, which ends the pytest process itself: an
external planner cannot (its cases run in an isolation worker, whose death fails one case).
"""

from __future__ import annotations

import atexit
import fnmatch
import json
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from filelock import FileLock

from impls.offsets_planner.registry import source_digest
from tests.subproc import CHILD_ADDOPTS

ROOT = Path(__file__).resolve().parent.parent
CASES = ROOT / "tests" / "data" / "report-cases"
PLANNER = "tests.planted.report_planners:configurable"
SEED = "tests.planted.report_planners:seed_plus_one"
PAST_ROW = "tests.planted.divergent_planners:reads_past_row"
VERDICT_CASES = ("err-steps-dtype-between-valid", "err-steps-bs-exceeds-between-valid",
                 "err-steps-wrapper-and-capacity-between-valid", "err-dtype-prefix-lens",
                 "hazard-prefix-past-row")
PLANNERS = {"d": (SEED, PAST_ROW)}
"""The planners of a run, where not ``python`` and :data:`PLANNER`."""
RUNS = {
    "a": ("scan", ["common", "old-only"], []),
    "b": ("message,exit-padding", ["common", "new-only"],
          ["-n", "2", "--no-isolate", "-p", "tests.planted.ends_pytest"]),
    "c": ("exit-bs3", ["common"], ["--results-every", "1", "--no-isolate", "-p",
                                   "tests.planted.ends_pytest"]),
    "d": ("", [], [*(a for c in VERDICT_CASES for a in ("--case", c)), "--manifest",
                   "tests/data/report-verdicts/seed-plus-one.json"]),
}


@dataclass(frozen=True)
class Run:
    """One finished run: its results file and pytest's exit code and output."""

    results: Path
    returncode: int
    output: str
    junit: Path
    """pytest's ``--junitxml`` file of the run."""


@cache
def _workdir() -> Path:
    """The session's folder (tests/conftest.py), shared by its pytest-xdist workers; a folder of
    this process's own where no session made one (this module used outside pytest)."""
    shared = os.environ.get("CONFORMANCE_TEST_SHARED_RUNS")
    if shared:
        return Path(shared)
    path = Path(tempfile.mkdtemp(prefix="report-runs-"))
    atexit.register(shutil.rmtree, path, ignore_errors=True)
    return path


@cache
def run(name: str) -> Run:
    """Run ``name`` (a key of :data:`RUNS`) once per test session and return its :class:`Run`:
    the first process to ask runs it under a lock (filelock, which torch already installs), the
    others read what it left (``NAME.done``: exit code and output)."""
    done = _workdir() / f"{name}.done"
    with FileLock(str(_workdir() / f"{name}.lock")):
        if not done.exists():
            finished = _start(name)
            done.write_text(json.dumps({"returncode": finished.returncode,
                                        "output": finished.output}))
            return finished
    saved = json.loads(done.read_text())
    results = _workdir() / f"{name}.json"
    return Run(results, saved["returncode"], saved["output"], results.with_suffix(".xml"))


def case_folder(folder: str) -> Path:
    """The copy of ``tests/data/report-cases/FOLDER`` the runs load, in the session's folder:
    its ``xfail`` entries naming :data:`PLANNER` list that planner's code as the harness digests
    it now (``sources``, conformance/corpus/case_xfail.py). An external planner gets a case's
    xfail only for the code an entry lists, and this planner's digest covers every local module
    it imports (``impls/``), so it cannot be written once into the data file. Made once per
    session, under a lock (pytest-xdist workers share the folder)."""
    out = _workdir() / "report-cases" / folder
    with FileLock(str(_workdir() / f"report-cases-{folder}.lock")):
        if out.exists():
            return out
        source = source_digest(PLANNER)
        assert source is not None, f"no source digest of {PLANNER}"
        sources = sorted({f["sha256"] for f in [source, *source.get("imports", [])]})
        out.mkdir(parents=True)
        for path in sorted((CASES / folder).glob("*.json")):
            doc = json.loads(path.read_text())
            for case in doc.get("cases", []):
                for entry in case.get("xfail", []):
                    if fnmatch.fnmatchcase(PLANNER, entry["planner"]):
                        entry["sources"] = sources
            (out / path.name).write_text(json.dumps(doc, indent=1))
    return out


def _start(name: str) -> Run:
    bug, case_dirs, extra = RUNS[name]
    results = _workdir() / f"{name}.json"
    env = {**os.environ, "REPORT_TEST_BUG": bug, "PYTHONDONTWRITEBYTECODE": "1"}
    for key in ("PYTEST_XDIST_WORKER", "PYTEST_XDIST_WORKER_COUNT"):
        env.pop(key, None)
    env["PYTEST_ADDOPTS"] = CHILD_ADDOPTS  # never this run's own
    planners = [a for p in PLANNERS.get(name, ("python", PLANNER)) for a in ("--planner", p)]
    args = [sys.executable, "-m", "pytest", "conformance/", "-p", "no:cacheprovider", "-q",
            *planners, "--results", str(results),
            f"--junitxml={results.with_suffix('.xml')}", *extra]
    for d in case_dirs:
        args += ["--cases", str(case_folder(d))]
    proc = subprocess.run(args, cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    return Run(results, proc.returncode, proc.stdout + proc.stderr, results.with_suffix(".xml"))
