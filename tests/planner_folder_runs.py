"""What the tests of external planners in ``$CONFORMANCE_PLANNER_PATH`` folders share: a clean
environment naming the folders, a corpus run and a ``python -m conformance`` command from the
checkout, and the results' entries (tests/test_hostile8.py, tests/test_hostile9.py)."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def planner_env(folder, **extra: str) -> dict:
    """This process's environment without pytest's and the planner path's variables, then
    ``CONFORMANCE_PLANNER_PATH`` = ``folder`` (a path, or a list of them), then ``extra``."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTEST_ADDOPTS", "PYTEST_XDIST_WORKER", "PYTHONPATH",
                        "CONFORMANCE_PLANNER_PATH")}
    if folder is not None:
        env["CONFORMANCE_PLANNER_PATH"] = (
            os.pathsep.join(map(str, folder)) if isinstance(folder, (list, tuple)) else str(folder))
    env.update(extra)
    return env


def corpus_run(folder, results: Path, *args: str, **extra: str) -> subprocess.CompletedProcess:
    """``pytest conformance/ ARGS`` from the checkout, ``folder`` the planner folder(s), its
    results written to ``results``."""
    return subprocess.run(
        [sys.executable, "-m", "pytest", "conformance/", "-p", "no:cacheprovider", "-q",
         "-p", "no:hypothesispytest", "--results", str(results), *args],
        cwd=ROOT, env=planner_env(folder, **extra), capture_output=True, text=True, timeout=300)


def conformance_command(folder, *args: str, **extra: str) -> subprocess.CompletedProcess:
    """``python -m conformance ARGS`` from the checkout."""
    return subprocess.run([sys.executable, "-m", "conformance", *args], cwd=ROOT,
                          env=planner_env(folder, **extra), capture_output=True, text=True,
                          timeout=300)


def results_of(results: Path) -> list[dict]:
    """The ``results`` entries of a results file."""
    return json.loads(results.read_text())["results"]


def sha256_of(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def planted_run(tmp_path: Path, planner: str, *cases: str, select: str | None = None):
    """(exit code, output, {case id: status}) of one corpus run of the planted planner
    ``planner`` (``module:attr``) on ``cases`` (``--case`` each; ``select``: a ``-k``
    expression), its results file ``tmp_path / "results.json"``, which must say the run is
    complete."""
    results = tmp_path / "results.json"
    args = ["--planner", planner]
    for case in cases:
        args += ["--case", case]
    if select:
        args += ["-k", select]
    proc = corpus_run(None, results, *args)
    assert results.exists(), proc.stdout[-3000:] + proc.stderr[-2000:]
    doc = json.loads(results.read_text())
    assert doc["complete"] is True, proc.stdout[-3000:]
    return (proc.returncode, proc.stdout + proc.stderr,
            {r["id"].split("[")[0]: r["status"] for r in results_of(results)})



def failing_run(results: Path, planners: list[str], case: str) -> dict[str, tuple[str, str]]:
    """``{planner: (status, message)}`` of one corpus run of every planner of ``planners``
    (``module:attr``) on ``case``, which must exit 1 (a failure)."""
    args = [a for planner in planners for a in ("--planner", planner)]
    proc = corpus_run(None, results, *args, "--case", case)
    assert proc.returncode == 1, (proc.stdout + proc.stderr)[-3000:]
    found = {r["id"]: (r["status"], r.get("message") or "") for r in results_of(results)}
    return {planner: found[f"{case}[{planner}]"] for planner in planners}


ONE_CALL = """
import importlib, sys
sys.path.insert(0, {root!r})
from tests import test_hostile14 as t
{header}
module, attr = {planner!r}.split(":")
kwargs = t._kwargs()
getattr(importlib.import_module(module), attr)(**kwargs)
assert kwargs["out_write_offsets"].tolist() == [0, 8, 9, 10]  # spec section 7: right
"""
"""A caller's process: ``header``, one call of ``planner`` on spec section 7's third example
(tests/test_hostile14.py ``_kwargs``), checked right; then the caller's own code follows."""


def after_one_call(planner: str, code: str, header: str = "", *, env: dict | None = None,
                   stdin=None, error_allowed: bool = False) -> str:
    """``"failing (exit 3)"``: the last line the caller's ``code`` prints and the process's exit
    status, run after one right call of ``planner`` (``module:attr``) in a process of its own
    (:data:`ONE_CALL`; ``header``: the caller's imports and set-up before the call; ``code`` and
    ``header`` dedented). Unless ``error_allowed``, the process must write no ``Error`` to stderr.
    """
    import textwrap
    source = ONE_CALL.format(root=str(ROOT), planner=planner,
                             header=textwrap.dedent(header).strip()) + textwrap.dedent(code)
    proc = subprocess.run([sys.executable, "-c", source], capture_output=True, text=True,
                          timeout=120, cwd=ROOT, env=env, stdin=stdin)
    assert error_allowed or "Error" not in proc.stderr, proc.stderr[-2000:]
    return f"{(proc.stdout.splitlines() or [''])[-1]} (exit {proc.returncode})"
