"""The plugin is loaded once, whether by the ``pytest11`` entry point of an install, by the root
``conftest.py`` of a checkout, or by both (the entry point is named by the module, so pytest sees
the conftest's ``pytest_plugins`` entry as loaded already)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import conformance.plugin.hooks as hooks

REPO = Path(__file__).resolve().parent.parent


def test_this_session_has_the_plugin_once_under_its_module_name(request):
    manager = request.config.pluginmanager
    assert [p for p in manager.get_plugins() if p is hooks] == [hooks]
    assert manager.get_plugin("conformance.plugin.hooks") is hooks


def test_the_root_conftest_alone_loads_it_without_entry_points(tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in ("PYTEST_ADDOPTS", "PYTEST_XDIST_WORKER")}
    env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"  # no pytest11 entry point is loaded
    proc = subprocess.run([sys.executable, "-m", "pytest", "conformance/", "-p", "no:cacheprovider",
                           "--planner", "python", "--case", "spec7-no-prefix",
                           "--results", str(tmp_path / "results.json")],
                          cwd=REPO, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "1 passed" in proc.stdout
    assert (tmp_path / "results.json").exists()
    assert "PytestAssertRewriteWarning" not in proc.stdout + proc.stderr, proc.stdout[-3000:]


def test_a_corpus_run_warns_of_no_plugin_module_imported_before_pytest_registers_it(tmp_path):
    """Every module of the plugin's ``pytest_plugins`` is registered before another imports it
    (conformance/plugin/hooks.py): one imported first cannot be assertion-rewritten, and pytest
    warns of it at the end of every run (``PytestAssertRewriteWarning: Module already imported so
    cannot be rewritten``), here through the install's entry point."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTEST_ADDOPTS", "PYTEST_XDIST_WORKER")}
    proc = subprocess.run([sys.executable, "-m", "pytest", "conformance/", "-p", "no:cacheprovider",
                           "--planner", "python", "--case", "spec7-no-prefix",
                           "--results", str(tmp_path / "results.json")],
                          cwd=REPO, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "1 passed" in proc.stdout
    assert "PytestAssertRewriteWarning" not in proc.stdout + proc.stderr, proc.stdout[-3000:]
