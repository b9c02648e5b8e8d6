"""A corpus run started outside the checkout's root (an editable install, run from the planner's
own folder with ``python -P -m pytest --pyargs conformance``, as README's "Run your own kernel"
says) prints rerun lines that work when pasted there: the corpus by ``--pyargs``, the planner
folder carried, the case found (conformance/engine/rerun.py ``CORPUS_COMMAND``,
conformance/paths.py ``FROM_ELSEWHERE``)."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from conformance.paths import INSTALLED
from tests.planner_folder_runs import planner_env

pytestmark = pytest.mark.skipif(INSTALLED, reason="an editable checkout's own behaviour")

CASE = "spec7-prefill-and-decodes"
WRONG = '''from impls.offsets_planner.python_planner import launch as _launch


def launch(**kw):
    _launch(**kw)
    kw["out_write_offsets"][1] += 1
'''


def test_a_rerun_line_printed_outside_the_checkout_works_when_pasted_there(tmp_path):
    (tmp_path / "offbyone.py").write_text(WRONG)
    run = subprocess.run(
        [sys.executable, "-P", "-m", "pytest", "--pyargs", "conformance", "-p", "no:cacheprovider",
         "-p", "no:hypothesispytest", "--planner", "offbyone:launch", "--case", CASE,
         "--results", str(tmp_path / "results.json")],
        cwd=tmp_path, env=planner_env(tmp_path), capture_output=True, text=True, timeout=300)
    assert run.returncode == 1, run.stdout[-3000:] + run.stderr[-2000:]
    lines = [m[1] for m in re.finditer(r"rerun: (.+)", run.stdout)]
    assert lines, run.stdout[-3000:]
    rerun = lines[0]
    assert f"CONFORMANCE_PLANNER_PATH={tmp_path}" in rerun, rerun
    assert " python -P -m pytest --pyargs conformance --planner offbyone:launch --case " \
        f"{CASE} --results reports/out/rerun-{CASE}.json" in rerun, rerun
    again = subprocess.run(["bash", "-c", rerun.replace("python -P", f"{sys.executable} -P", 1)],
                           cwd=tmp_path, env=planner_env(tmp_path), capture_output=True, text=True,
                           timeout=300)
    assert again.returncode == 1, again.stdout[-3000:] + again.stderr[-2000:]
    assert "file or directory not found" not in again.stdout + again.stderr
    assert (tmp_path / "reports" / "out" / f"rerun-{CASE}.json").is_file()
    assert re.search(r"1 failed", again.stdout), again.stdout[-2000:]
