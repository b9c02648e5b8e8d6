"""Run ``pytest conformance/`` or ``python -m conformance`` in a subprocess, as a user would, and read
the outcome of every item from a JUnit XML file (``xunit1``, which keeps ``user_properties``).

Used by the tests that must prove a whole run completes, prints its summary and shows no traceback.
"""

from __future__ import annotations

import os
import subprocess
import sys
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


def run_pytest(tmp: Path, *args: str, timeout: float = 300) -> tuple[subprocess.CompletedProcess,
                                                                     dict[str, Item]]:
    """``pytest conformance/ ARGS`` from the repository root; results go under ``tmp``.

    Returns:
        (the completed process, {item name: Item}); the dict is empty when no XML was written.
    """
    xml = tmp / "junit.xml"
    cmd = [sys.executable, "-m", "pytest", "conformance/", "-p", "no:cacheprovider",
           "--results", str(tmp / "results.json"), f"--junitxml={xml}", "-o", "junit_family=xunit1",
           *args]
    proc = subprocess.run(cmd, cwd=REPO, env=_env(), capture_output=True, text=True,
                          timeout=timeout)
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
