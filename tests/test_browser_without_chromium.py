"""Without Chromium the browser tests (tests/test_browser.py) skip with a reason that names the
install command, and under CI=true each one errors in setup instead (the run exits 1): they never skip silently in CI."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent


def _run(ci: str | None) -> subprocess.CompletedProcess:
    bin_dir = str(Path(sys.executable).parent)  # this interpreter, and no chromium on PATH
    env = {k: v for k, v in os.environ.items() if k not in ("CI", "PYTEST_ADDOPTS")}
    env["PATH"] = bin_dir
    if ci is not None:
        env["CI"] = ci
    # the browser tests are in the slow set (pyproject's marker): -m slow selects them
    return subprocess.run([sys.executable, "-m", "pytest", "tests/test_browser.py", "-p",
                           "no:cacheprovider", "-rsf", "-m", "slow", "-k", "status_filter"], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=120)


@pytest.mark.slow  # a pytest run of the browser tests each, with the slow set's: together about 11 s
@pytest.mark.skipif(os.name != "posix", reason="PATH handling")
def test_a_missing_chromium_skips_with_the_install_command():
    proc = _run(None)
    assert proc.returncode == 0, proc.stdout[-2000:]
    assert "1 skipped" in proc.stdout.splitlines()[-1]
    assert "Chromium is not installed: apt-get install chromium" in proc.stdout


@pytest.mark.slow  # a pytest run of the browser tests each, with the slow set's: together about 11 s
@pytest.mark.skipif(os.name != "posix", reason="PATH handling")
def test_a_missing_chromium_fails_under_ci():
    proc = _run("true")
    assert proc.returncode == 1, proc.stdout[-2000:]
    assert "1 error" in proc.stdout.splitlines()[-1]  # its setup fails: the run is red
    assert "CI=true but no chromium on PATH: apt-get install chromium" in proc.stdout
