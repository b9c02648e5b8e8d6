"""``python -m conformance report`` never says more than it checked (README, *Reports*):

* a planner's recorded source is looked up in the run's recorded planner folders without importing
  from it (so the report needs no ``PYTHONPATH`` and runs nothing planted there); one found
  nowhere is named in the first line of every format, and ``--strict`` exits 1
  (conformance/reporting/freshness.py);
* ``--compare`` of runs whose planners differ says first which planner each side ran alone, never
  says "no regressions" when no planner was compared, and ``--fail-on-regression`` fails when no
  planner was compared or a planner only NEW ran does not pass (conformance/reporting/compare_verdict.py).

The results files are real ``pytest conformance/`` runs of two cases, with an external planner
package ``fukpp`` in ``CONFORMANCE_PLANNER_PATH`` (as a user runs their own planner): ``fukpp.planner`` is the
pure-Python planner, ``fukpp.broken`` plans nothing (fails every case).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.subproc import CHILD_ADDOPTS

ROOT = Path(__file__).resolve().parent.parent
CASES = ("spec7-prefill-and-decodes", "spec7-lut-shift")
GOOD, BROKEN = "fukpp.planner:launch", "fukpp.broken:launch"


def _env(pythonpath: Path | None) -> dict:
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTEST_ADDOPTS", "PYTEST_XDIST_WORKER", "PYTEST_XDIST_WORKER_COUNT",
                        "PYTHONPATH", "CONFORMANCE_PLANNER_PATH")}
    env["PYTEST_ADDOPTS"] = CHILD_ADDOPTS
    if pythonpath is not None:
        env["CONFORMANCE_PLANNER_PATH"] = str(pythonpath)
    return env


def _package(folder: Path) -> Path:
    """``folder/pp/fukpp`` with the two planners; returns ``folder/pp``."""
    pkg = folder / "pp" / "fukpp"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "planner.py").write_text("from impls.offsets_planner.python_planner import launch\n")
    (pkg / "broken.py").write_text("def launch(**kwargs):\n    return None\n")
    return folder / "pp"


def _run(pp: Path, results: Path, *planners: str) -> dict:
    args = [a for p in planners for a in ("--planner", p)] + \
        [a for c in CASES for a in ("--case", c)]
    proc = subprocess.run([sys.executable, "-m", "pytest", "conformance/", "-p",
                           "no:cacheprovider", "-q", *args, "--results", str(results)],
                          cwd=ROOT, env=_env(pp), capture_output=True, text=True, timeout=300)
    doc = json.loads(results.read_text())
    assert doc["complete"], proc.stdout[-3000:] + proc.stderr[-3000:]
    return doc


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """{name: results path}: ``A`` (fukpp.planner only), ``B`` (fukpp.broken only), ``pA`` and
    ``pB`` (each with ``python`` too); and the planner folder of the runs."""
    base = tmp_path_factory.mktemp("never_lies")
    pp = _package(base)
    planners = {"A": (GOOD,), "B": (BROKEN,), "pA": ("python", GOOD), "pB": ("python", BROKEN)}
    paths = {}
    for name, chosen in planners.items():
        paths[name] = base / f"{name}.json"
        doc = _run(pp, paths[name], *chosen)
        statuses = {r["id"]: r["status"] for r in doc["results"]}
        assert statuses == {f"{c}[{p}]": "fail" if p == BROKEN else "pass"
                            for c in CASES for p in chosen}, statuses
        assert doc["environment"]["CONFORMANCE_PLANNER_PATH"] == str(pp)
    return paths, pp


def _report(*args: str, pythonpath: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "conformance", "report", *args], cwd=ROOT,
                          env=_env(pythonpath), capture_output=True, text=True, timeout=120)


# === 1. a recorded source whose module is not importable now ====================================


def test_the_run_recorded_the_planner_s_relative_source(runs):
    paths, _ = runs
    source = json.loads(paths["A"].read_text())["fingerprint"]["planners"][GOOD]["source"]
    assert (source["module"], source["file"]) == ("fukpp.planner", "fukpp/planner.py")


def test_an_edited_planner_is_found_in_the_run_s_pythonpath_without_setting_it(runs, tmp_path):
    """The user's case: run with ``CONFORMANCE_PLANNER_PATH=PP``, edit the planner, report without it: the
    report reads the planner's file from the run's recorded planner folder (importing nothing
    from it) and names the change; with that folder gone, it cannot verify, and says so."""
    paths, pp = runs
    results = tmp_path / "results.json"
    shutil.copy(paths["A"], results)
    doc = json.loads(results.read_text())
    mine = tmp_path / "pp"
    shutil.copytree(pp, mine)
    (mine / "fukpp" / "planner.py").write_text(
        "from impls.offsets_planner.python_planner import launch  # edited\n")
    doc["environment"]["CONFORMANCE_PLANNER_PATH"] = str(mine)  # as if the run had been made with this copy
    results.write_text(json.dumps(doc))

    strict = _report(str(results), "--format", "text", "--strict")
    assert strict.returncode == 1, strict.stdout + strict.stderr
    assert strict.stdout.splitlines()[0] == f"STALE RESULTS: source changed since the run: {GOOD}"

    shutil.rmtree(mine)
    expected = (f"STALE RESULTS: source cannot be verified now: {GOOD} (fukpp.planner is not "
                f"found here nor in the run's folders {mine})")
    strict = _report(str(results), "--format", "text", "--strict")
    assert strict.returncode == 1, strict.stdout + strict.stderr
    assert strict.stdout.splitlines()[0] == expected
    assert strict.stderr == f"warning: {expected}\n"
    plain = _report(str(results), "--format", "text")
    assert plain.returncode == 0 and plain.stdout.splitlines()[0] == expected


def _moved(paths: dict, tmp_path: Path) -> tuple[Path, str]:
    """Run A's results with its recorded planner folder pointing at a folder that is not there."""
    doc = json.loads(paths["A"].read_text())
    gone = str(tmp_path / "gone")
    doc["environment"]["CONFORMANCE_PLANNER_PATH"] = gone
    results = tmp_path / "moved.json"
    results.write_text(json.dumps(doc))
    return results, gone


def test_not_found_is_named_in_markdown_and_html(runs, tmp_path):
    paths, _ = runs
    results, gone = _moved(paths, tmp_path)
    reason = (f"source cannot be verified now: {GOOD} (fukpp.planner is not found here nor in "
              f"the run&#39;s folders {gone})")
    md = _report(str(results), "--format", "markdown", "--strict")
    assert md.returncode == 1
    assert md.stdout.splitlines()[0] == (
        f"## Conformance: STALE RESULTS: `{reason.replace('&#39;', chr(39))}`")
    page = tmp_path / "report.html"
    html = _report(str(results), "--out", str(page), "--strict")
    assert html.returncode == 1
    text = page.read_text()
    assert f"<title>STALE RESULTS: {reason} - Conformance report" in text
    assert f'<p id="warning" class="banner">STALE RESULTS: {reason}</p>' in text


def test_a_planner_in_the_run_s_pythonpath_is_not_flagged(runs):
    paths, _ = runs
    proc = _report(str(paths["A"]), "--format", "text", "--strict")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.startswith("2 results, 0 not passing; run complete") and proc.stderr == ""


def test_a_module_planted_in_the_run_s_pythonpath_never_runs_in_the_report(runs, tmp_path):
    """A planner can write files into its own folder (the run's ``CONFORMANCE_PLANNER_PATH``); the report
    reads that folder for the digest only, so a planted ``tabulate.py`` (which the report's
    process imports at start) is never imported there."""
    paths, pp = runs
    folder = tmp_path / "pp"
    shutil.copytree(pp, folder)
    marker = tmp_path / "ran"
    (folder / "tabulate.py").write_text(f"open({str(marker)!r}, 'w').close()\n"
                                        "raise SystemExit('planted tabulate ran')\n")
    doc = json.loads(paths["B"].read_text())
    doc["environment"]["CONFORMANCE_PLANNER_PATH"] = str(folder)
    results = tmp_path / "b.json"
    results.write_text(json.dumps(doc))
    proc = _report(str(results), "--format", "text", "--strict")
    assert not marker.exists()
    assert proc.stdout.startswith("2 results, 2 not passing; run complete"), proc.stdout + proc.stderr


def test_a_run_without_a_recorded_pythonpath_says_so(runs):
    from conformance.reporting.freshness import stale_reasons

    paths, _ = runs
    doc = json.loads(paths["pA"].read_text())
    del doc["environment"]["CONFORMANCE_PLANNER_PATH"]
    assert stale_reasons(doc, head=doc["fingerprint"]["commit"]) == [
        f"source cannot be verified now: {GOOD} (fukpp.planner is not found here and the run "
        "recorded no PYTHONPATH or CONFORMANCE_PLANNER_PATH)"]  # python's source is found and unchanged: not named


# === 2. --compare of runs that share no planner =================================================


def _compare(old: Path, new: Path, *more: str) -> subprocess.CompletedProcess:
    return _report("--compare", str(old), str(new), "--format", "text", *more)


def test_runs_of_different_external_planners_only_are_not_called_clean(runs):
    paths, _ = runs
    proc = _compare(paths["A"], paths["B"])
    assert proc.returncode == 0, proc.stderr  # it renders; the gate is --fail-on-regression
    lines = proc.stdout.splitlines()
    assert lines[2] == (
        f"not compared: OLD ran {GOOD} only, NEW ran {BROKEN} only (2 of NEW's items of those "
        "not passing, with no baseline); NO PLANNER COMPARED: regressions cannot be told "
        "(0 newly failing, 0 disappeared); 0 newly passing, 0 other status changes, 0 appeared, "
        "0 unchanged")
    assert lines[4] == (f"the runs ran different planners (only in OLD: {GOOD}; only in NEW: "
                        f"{BROKEN}): compared on no planner (only the shared validator/allocator "
                        "rows), 4 item(s) of the others left out")
    assert "no regressions" not in proc.stdout
    gate = _compare(paths["A"], paths["B"], "--fail-on-regression")
    assert gate.returncode == 1
    assert gate.stderr == ("--fail-on-regression: no planner compared; 2 item(s) not passing of "
                           "a planner only NEW ran (no baseline)\n")


def test_nothing_compared_fails_the_gate_even_when_new_passes(runs):
    paths, _ = runs
    gate = _compare(paths["B"], paths["A"], "--fail-on-regression")
    assert gate.returncode == 1
    assert gate.stdout.splitlines()[2].startswith(
        f"not compared: OLD ran {BROKEN} only, NEW ran {GOOD} only; NO PLANNER COMPARED: "
        "regressions cannot be told (0 newly failing, 0 disappeared); ")
    assert gate.stderr == "--fail-on-regression: no planner compared\n"


def test_a_new_planner_s_failures_fail_the_gate_when_python_alone_was_compared(runs):
    paths, _ = runs
    proc = _compare(paths["pA"], paths["pB"], "--fail-on-regression")
    assert proc.returncode == 1
    lines = proc.stdout.splitlines()
    assert lines[2] == (
        f"not compared: OLD ran {GOOD} only, NEW ran {BROKEN} only (2 of NEW's items of those "
        "not passing, with no baseline); no regressions (0 newly failing, 0 disappeared); "
        "0 newly passing, 0 other status changes, 0 appeared, 2 unchanged")
    assert lines[4] == (f"the runs ran different planners (only in OLD: {GOOD}; only in NEW: "
                        f"{BROKEN}): compared on the 1 planner(s) both ran (python), 4 item(s) "
                        "of the others left out")
    assert proc.stderr == ("--fail-on-regression: 2 item(s) not passing of a planner only NEW "
                           "ran (no baseline)\n")


def test_a_new_planner_that_passes_with_python_compared_passes_the_gate(runs):
    paths, _ = runs
    proc = _compare(paths["pB"], paths["pA"], "--fail-on-regression")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.splitlines()[2].startswith(
        f"not compared: OLD ran {BROKEN} only, NEW ran {GOOD} only; no regressions "
        "(0 newly failing, 0 disappeared); ")
    assert proc.stderr == ""


def test_runs_of_the_same_planners_say_nothing_of_it(runs):
    paths, _ = runs
    proc = _compare(paths["pB"], paths["pB"], "--fail-on-regression")
    assert proc.returncode == 0 and proc.stderr == ""
    lines = proc.stdout.splitlines()
    assert lines[2] == ("no regressions (0 newly failing, 0 disappeared); 0 newly passing, "
                        "0 other status changes, 0 appeared, 4 unchanged")
    assert "not compared" not in proc.stdout and "different planners" not in proc.stdout


def test_not_compared_leads_markdown_and_html(runs, tmp_path):
    paths, _ = runs
    md = _report("--compare", str(paths["A"]), str(paths["B"]), "--format", "markdown")
    assert md.stdout.splitlines()[2].startswith(
        f"not compared: OLD ran `{GOOD}` only, NEW ran `{BROKEN}` only (2 of NEW's items of "
        "those not passing, with no baseline); NO PLANNER COMPARED: ")
    page = tmp_path / "compare.html"
    _report("--compare", str(paths["A"]), str(paths["B"]), "--out", str(page))
    assert (f'<p id="headline">not compared: OLD ran {GOOD} only, NEW ran {BROKEN} only (2 of '
            "NEW&#39;s items of those not passing, with no baseline); NO PLANNER COMPARED: "
            in page.read_text())


def test_a_planner_folder_on_pythonpath_is_refused_before_the_planner_runs(tmp_path):
    """The folder of an external planner on the judge's own import path (PYTHONPATH) is refused
    with the fix, before the probe imports anything (impls/planner_path.py): a module there, or
    one the planner writes there, would run in pytest's process."""
    pp = _package(tmp_path)
    marker = tmp_path / "imported"
    (pp / "fukpp" / "loud.py").write_text(f"open({str(marker)!r}, 'w').close()\n"
                                          "def launch(**kwargs):\n    return None\n")
    env = _env(None)
    env["PYTHONPATH"] = str(pp)
    proc = subprocess.run([sys.executable, "-m", "pytest", "conformance/", "-p", "no:cacheprovider",
                           "-q", "--planner", "fukpp.loud:launch", "--case", CASES[0],
                           "--results", str(tmp_path / "r.json")],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 4, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert (f"planner 'fukpp.loud:launch' is imported from {pp.resolve()}, a folder on the judge's "
            "own import path (on PYTHONPATH)") in proc.stderr
    assert "Take it off PYTHONPATH and name it in CONFORMANCE_PLANNER_PATH: " in proc.stderr
    # the fix repeats the user's whole command (its case and results too), off PYTHONPATH
    assert (f"CONFORMANCE_PLANNER_PATH={pp.resolve()} pytest conformance/ -p no:cacheprovider -q "
            f"--planner fukpp.loud:launch --case {CASES[0]} --results {tmp_path / 'r.json'}"
            ) in proc.stderr
    assert not marker.exists()


def test_a_planner_folder_that_is_the_working_directory_is_named_as_such(tmp_path, monkeypatch):
    """``python -m pytest`` from the planner's own folder puts it on the path as the working
    directory: the refusal says so, and that ``-P`` keeps it off, not "off PYTHONPATH"."""
    from impls.planner_path import judge_path_fault

    (tmp_path / "fukcwd.py").write_text("def launch(**kwargs):\n    return None\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("PYTHONPATH", raising=False)
    monkeypatch.syspath_prepend("")
    command = "python -P -m pytest --pyargs conformance"
    fault = judge_path_fault("fukcwd:launch", command=command)
    assert fault == (
        f"planner 'fukcwd:launch' is imported from {tmp_path.resolve()}, a folder on the judge's "
        "own import path (the working directory, which `python -m` puts on the import path): "
        "every module there (and every file the planner writes there) is on the judge's own "
        "import path, ahead of the libraries it uses. Name it in CONFORMANCE_PLANNER_PATH and "
        "keep the working directory off the path (`python -P`, as below, or run from another "
        f"folder): CONFORMANCE_PLANNER_PATH={tmp_path.resolve()} {command} --planner "
        "fukcwd:launch")
