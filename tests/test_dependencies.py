"""The packages the pytest plugin needs are runtime dependencies of the project.

The pytest11 entry point (pyproject.toml) loads ``conformance.plugin.hooks`` into every pytest
run of an environment where the project is installed, so every third-party module that import
pulls in must come with a plain ``pip install`` of the project (its ``dependencies`` and what they
require in turn), not only with the ``dev`` or ``gpu`` extras: an installed wheel without
pytest-benchmark failed every pytest run of its environment (``PluginImportFailure``).
"""

from __future__ import annotations

import importlib.metadata as metadata
import os
import subprocess
import sys
import tomllib
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parent.parent


def _closure(requirements: list[str]) -> set[str]:
    """The distributions ``requirements`` (no extras, markers of this interpreter) install, and
    what each of them requires in turn, by the installed metadata."""
    seen: set[str] = set()
    todo = [Requirement(r) for r in requirements]
    while todo:
        req = todo.pop()
        if req.marker is not None and not req.marker.evaluate({"extra": ""}):
            continue
        name = canonicalize_name(req.name)
        if name in seen:
            continue
        seen.add(name)
        try:
            todo.extend(Requirement(r) for r in metadata.requires(req.name) or [])
        except metadata.PackageNotFoundError:
            pass
    return seen


BLOCKER = """
import importlib.abc, sys
BLOCKED = set(sys.argv[1].split(","))
class Block(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in BLOCKED:
            raise ImportError(f"{name}: not a runtime dependency (blocked)")
        return None
sys.meta_path.insert(0, Block())
import pytest
sys.exit(pytest.main(["-p", "no:cacheprovider", "-p", "conformance.plugin.hooks", "-q",
                      "--co", sys.argv[2]]))
"""


def _not_installed_by(runtime: set[str]) -> set[str]:
    """Top-level module names of installed distributions outside ``runtime`` (and not the
    standard library's): what a plain install of the project would not have."""
    owners = metadata.packages_distributions()
    return {top for top, dists in owners.items()
            if top not in sys.stdlib_module_names and top.isidentifier()
            and not any(canonicalize_name(d) in runtime for d in dists)}


def _project():
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]


def _plain_install_run(tmp_path: Path, also_blocked: set[str] = frozenset()):
    """``(completed process, blocked names)``: a pytest run collecting an unrelated test file,
    with the plugin loaded as the entry point loads it and every module of a distribution a
    plain install would not bring (and ``also_blocked``) unimportable."""
    project = _project()
    runtime = _closure(project["dependencies"]) | {canonicalize_name(project["name"])}
    blocked = _not_installed_by(runtime) | set(also_blocked)
    (tmp_path / "test_mine.py").write_text("def test_mine():\n    assert 1 + 1 == 2\n")
    env = {**os.environ, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
    env.pop("PYTEST_ADDOPTS", None)
    out = subprocess.run([sys.executable, "-c", BLOCKER, ",".join(sorted(blocked)),
                          str(tmp_path / "test_mine.py")], cwd=tmp_path, env=env,
                         capture_output=True, text=True, timeout=300)
    return out, blocked


def test_a_plain_install_loads_the_plugin_into_any_pytest_run(tmp_path):
    """The run collects the test (exit 0), the bench's plugin loaded with the harness's."""
    out, blocked = _plain_install_run(tmp_path)
    assert {"pytest_benchmark", "xdist", "hypothesis"} & blocked == {"xdist", "hypothesis"}
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    assert "1 test collected" in out.stdout, out.stdout[-2000:]


def test_without_pytest_benchmark_among_them_the_same_run_fails(tmp_path):
    """The check above can fail: with pytest-benchmark blocked as well (as when it was a ``dev``
    extra only), the same run stops at the plugin's import."""
    out, _ = _plain_install_run(tmp_path, {"pytest_benchmark"})
    assert out.returncode != 0
    assert "PluginImportFailure: conformance.bench.plugin" in out.stdout + out.stderr
