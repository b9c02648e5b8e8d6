"""Every command the harness prints or stores is safe to paste into a shell (``shlex.join``) and
carries what it needs: ``--cases`` outside the default corpus, the environment the run had
(PYTHONPATH, TRITON_INTERPRET, NUMBA_ENABLE_CUDASIM), and its own results file, so pasting a rerun
never replaces the full run's ``reports/out/results.json``."""

from __future__ import annotations

import json
import os
import shlex
import stat
import subprocess
from pathlib import Path

from conformance.engine.rerun import list_cases_command, rerun_command
from tests.subproc import run_pytest

HOSTILE = "x $(touch PWNED) d"


def _fake_tools(folder: Path) -> Path:
    """A PATH folder whose ``python`` and ``pytest`` only record their argv as JSON lines."""
    folder.mkdir()
    for name in ("python", "pytest"):
        tool = folder / name
        tool.write_text("#!/bin/sh\nprintf '%s\\0' \"$@\" >> \"$ARGV_LOG\"\nprintf '\\n' >> "
                        "\"$ARGV_LOG\"\n")
        tool.chmod(tool.stat().st_mode | stat.S_IXUSR)
    return folder


def _paste(command: str, cwd: Path) -> list[list[str]]:
    """Run ``command`` through ``bash -c`` with the fake tools first on PATH, in ``cwd``; returns
    the argv of every tool it called."""
    log = cwd / "argv.log"
    env = {**os.environ, "PATH": f"{_fake_tools(cwd / 'bin')}:{os.environ['PATH']}",
           "ARGV_LOG": str(log)}
    subprocess.run(["bash", "-c", command], cwd=cwd, env=env, check=True, timeout=30)
    lines = log.read_text().splitlines() if log.exists() else []
    return [line.strip("\0").split("\0") for line in lines if line]


def test_load_rerun_of_a_hostile_cases_folder_runs_no_shell_code(tmp_path: Path):
    cases = tmp_path / HOSTILE
    cases.mkdir()
    (cases / "bad.json").write_text("{")
    proc, items = run_pytest(tmp_path, "--cases", str(cases), "--planner", "python")
    assert proc.returncode == 1, proc.stdout[-2000:]
    doc = json.loads((tmp_path / "results.json").read_text())
    [load] = [r for r in doc["results"] if r["planner"] == "load"]
    assert load["status"] == "fail"
    paste = tmp_path / "paste"
    paste.mkdir()
    calls = _paste(load["rerun"], paste)
    assert not (paste / "PWNED").exists() and not Path("PWNED").exists()
    assert len(calls) == 1 and calls[0] == ["-m", "conformance", "--cases", str(cases), "cases"]


def test_rerun_command_quotes_every_word_and_keeps_the_full_run(tmp_path: Path):
    folder = tmp_path / HOSTILE
    env = {"PYTHONPATH": "/opt/my kernels;$(touch PWNED)", "TRITON_INTERPRET": "1"}
    command = rerun_command("spec7-no-prefix", "my.mod:launch $(touch PWNED)", folder, env)
    assert shlex.split(command) == [
        "PYTHONPATH=/opt/my kernels;$(touch PWNED)", "TRITON_INTERPRET=1", "pytest", "conformance/",
        "--planner", "my.mod:launch $(touch PWNED)", "--cases", str(folder),
        "--case", "spec7-no-prefix", "--results", "reports/out/rerun-spec7-no-prefix.json"]
    probe = tmp_path / "probe"
    probe.mkdir()
    # The assignments must stay assignments: the fake pytest sees the environment, not argv words.
    script = command.replace(" pytest ", " sh -c 'printf %s \"$PYTHONPATH\" > env.txt' pytest ", 1)
    calls = _paste(script, probe)
    assert calls == [] and (probe / "env.txt").read_text() == env["PYTHONPATH"]
    assert not (probe / "PWNED").exists()


def test_rerun_command_without_environment_or_folder():
    assert rerun_command("c1", "python", None, {}) == (
        "pytest conformance/ --planner python --case c1 --results reports/out/rerun-c1.json")
    assert rerun_command("c1", "validator", None, {}).startswith("pytest conformance/ --case c1 ")
    assert list_cases_command([Path("/tmp/a b")], {}) == \
        "python -m conformance --cases '/tmp/a b' cases"
    assert list_cases_command([], {}, extra=[Path("/tmp/a;b")]) == \
        "python -m conformance --extra-cases '/tmp/a;b' cases"
