"""Run ``pytest conformance/`` or ``python -m conformance`` in a subprocess, as a user would, and read
the outcome of every item from a JUnit XML file (``xunit1``, which keeps ``user_properties``).

Used by the tests that must prove a whole run completes, prints its summary and shows no traceback;
:func:`cli` runs a ``python -m conformance`` command that needs no process of its own in this one.
"""

from __future__ import annotations

import contextlib
import io
import os
import subprocess
import sys
import traceback
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


@dataclass
class Item:
    """One test item: ``outcome`` is passed / failed / skipped / error; ``text`` the failure."""

    outcome: str
    text: str = ""
    properties: dict = field(default_factory=dict)


CHILD_ADDOPTS = "-p no:hypothesispytest"
"""``PYTEST_ADDOPTS`` of every pytest run a test starts: Hypothesis's plugin (the harness's own
property tests use it, a corpus run never does) costs about a second of each run's start."""


def _env() -> dict:
    env = dict(os.environ)
    env["PYTEST_ADDOPTS"] = CHILD_ADDOPTS  # never this run's own
    env.pop("PYTEST_XDIST_WORKER", None)
    return env


def run_pytest(tmp: Path, *args: str, timeout: float = 300,
               env: dict | None = None) -> tuple[subprocess.CompletedProcess, dict[str, Item]]:
    """``pytest conformance/ ARGS`` from the repository root; results go under ``tmp``; ``env``:
    variables set on top of this process's.

    Returns:
        (the completed process, {item name: Item}); the dict is empty when no XML was written.
    """
    xml = tmp / "junit.xml"
    cmd = [sys.executable, "-m", "pytest", "conformance/", "-p", "no:cacheprovider",
           "--results", str(tmp / "results.json"), f"--junitxml={xml}", "-o", "junit_family=xunit1",
           *args]
    proc = subprocess.run(cmd, cwd=REPO, env={**_env(), **(env or {})}, capture_output=True,
                          text=True, timeout=timeout)
    items: dict[str, Item] = {}
    if xml.exists():
        for case in ET.parse(xml).getroot().iter("testcase"):
            item = Item("passed")
            for tag in ("failure", "error", "skipped"):
                node = case.find(tag)
                if node is not None:
                    item.outcome = {"failure": "failed"}.get(tag, tag)
                    item.text = node.text or node.get("message") or ""
            for prop in case.iter("property"):
                item.properties[prop.get("name")] = prop.get("value")
            items[case.get("name")] = item
    return proc, items


def run_cli(*args: str, timeout: float = 300) -> subprocess.CompletedProcess:
    """``python -m conformance ARGS`` from the repository root."""
    return subprocess.run([sys.executable, "-m", "conformance", *args], cwd=REPO, env=_env(),
                          capture_output=True, text=True, timeout=timeout)


def cli(*args: str) -> subprocess.CompletedProcess:
    """``python -m conformance ARGS`` in this process, from the repository root: what
    :func:`run_cli` returns (exit code, standard output, standard error), without a second
    interpreter (one costs seconds: torch's import). For commands that import no planner under
    test (``report``, ``cases``, ``repro`` writing a script, ``manifest``): a crash is exit code 1
    with its traceback on standard error, as a process's would be."""
    from conformance.cli import main

    out, err, here = io.StringIO(), io.StringIO(), os.getcwd()
    os.chdir(REPO)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                code = main(list(args))
            except SystemExit as exc:  # argparse's usage errors, sys.exit in a command
                code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
                if exc.code is not None and not isinstance(exc.code, int):
                    print(exc.code, file=sys.stderr)
            except Exception:  # noqa: BLE001 - as an interpreter would: the traceback, status 1
                traceback.print_exc()
                code = 1
    finally:
        os.chdir(here)
    return subprocess.CompletedProcess(["python", "-m", "conformance", *args], code,
                                       out.getvalue(), err.getvalue())
