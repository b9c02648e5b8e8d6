"""A rerun line carries the run's ``PYTHONPATH`` only where the rerun needs it
(conformance/engine/rerun.py ``rerun_pythonpath``; README "Reports": a report or a rerun from a
checkout needs no ``PYTHONPATH``): the checkout root is left out when the command runs from that
root and the package would be found there without it; kept from another folder, where another
checkout's install would be imported instead, and for every other folder (an external planner's).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from conformance.engine import rerun
from conformance.paths import REPO_ROOT

ROOT = Path("/example/checkout")
PLANNERS = "/example/my-planners"
COMMAND = ("pytest conformance/ --planner python --case spec7-no-prefix "
           "--results reports/out/rerun-spec7-no-prefix.json")


def _path(value, from_elsewhere=False, found=None):
    return rerun.rerun_pythonpath(value, from_elsewhere=from_elsewhere, root=ROOT,
                                  found_without=lambda entries: found)


@pytest.mark.parametrize("value", [str(ROOT), f"{ROOT}/", f"{ROOT}{os.pathsep}{ROOT}"])
def test_the_checkout_root_is_dropped_when_the_rerun_runs_from_it(value):
    assert _path(value) is None  # not installed: the root conftest.py loads the package
    assert _path(value, found=ROOT) is None  # installed editable from this very checkout


def test_an_external_planner_folder_is_kept_without_the_root():
    assert _path(f"{PLANNERS}{os.pathsep}{ROOT}") == PLANNERS
    assert _path(PLANNERS) == PLANNERS


def test_the_root_is_kept_from_another_folder_or_where_another_checkout_would_be_imported():
    assert _path(str(ROOT), from_elsewhere=True) == str(ROOT)
    assert _path(f"{ROOT}{os.pathsep}{PLANNERS}", found=Path("/elsewhere/checkout")) == \
        f"{ROOT}{os.pathsep}{PLANNERS}"


@pytest.fixture
def run_environment(monkeypatch):
    """This process's rerun settings replaced by a run's from the checkout root with
    ``PYTHONPATH`` set to it (and no poison seed: the line reads the same every time)."""
    monkeypatch.setattr(rerun, "RUN_ENVIRONMENT",
                        {"PYTHONPATH": str(REPO_ROOT), "TRITON_INTERPRET": "1"})
    monkeypatch.setattr(rerun, "RUN_SETTINGS", {})
    monkeypatch.setattr(rerun, "FROM_ELSEWHERE", False)
    monkeypatch.setattr(rerun, "CORPUS_COMMAND", ["pytest", "conformance/"])


def test_a_failing_case_s_rerun_line_from_the_checkout_has_no_pythonpath(run_environment,
                                                                        monkeypatch):
    monkeypatch.setattr(rerun, "package_found_without", lambda entries: None)
    assert rerun.rerun_command("spec7-no-prefix", "python") == f"TRITON_INTERPRET=1 {COMMAND}"
    monkeypatch.setattr(rerun, "package_found_without", lambda entries: REPO_ROOT)
    assert rerun.rerun_command("spec7-no-prefix", "python") == f"TRITON_INTERPRET=1 {COMMAND}"
    assert rerun.list_cases_command([]) == "TRITON_INTERPRET=1 python -m conformance cases"


def test_a_rerun_line_keeps_pythonpath_where_another_checkout_would_be_imported(
        run_environment, monkeypatch):
    monkeypatch.setattr(rerun, "package_found_without", lambda entries: Path("/other/checkout"))
    assert rerun.rerun_command("spec7-no-prefix", "python") == \
        f"PYTHONPATH={REPO_ROOT} TRITON_INTERPRET=1 {COMMAND}"


def test_package_found_without_asks_the_import_system():
    """Without the checkout root and PYTHONPATH on the path: this checkout, another folder's
    install (an editable one of another checkout) or nothing; never this checkout by way of the
    PYTHONPATH entries left out."""
    entries = os.environ.get("PYTHONPATH", "").split(os.pathsep)
    found = rerun.package_found_without(entries)
    assert found is None or (found / "conformance" / "__init__.py").is_file()


def test_a_rerun_line_printed_outside_the_checkout_keeps_pythonpath(tmp_path):
    """A real process started in another folder (FROM_ELSEWHERE) with the checkout on
    ``PYTHONPATH``: its rerun line carries it, as ``python -P -m pytest --pyargs`` needs."""
    env = {k: v for k, v in os.environ.items() if k not in rerun.RERUN_ENVIRONMENT}
    env["PYTHONPATH"] = str(REPO_ROOT)
    proc = subprocess.run(
        [sys.executable, "-c", "from conformance.engine.rerun import rerun_command; "
                               "print(rerun_command('spec7-no-prefix', 'python'))"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == (
        f"PYTHONPATH={REPO_ROOT} python -P -m pytest --pyargs conformance --planner python "
        "--case spec7-no-prefix --results reports/out/rerun-spec7-no-prefix.json")
