"""A run records which code each planner is, and a comparison says when it changed."""

from __future__ import annotations

import hashlib
from pathlib import Path

from conformance.reporting.code_changes import changed_code
from impls.offsets_planner.registry import source_digest

ROOT = Path(__file__).resolve().parent.parent


def test_builtin_planner_source_is_its_module_file():
    got = source_digest("python")
    path = ROOT / "impls" / "offsets_planner" / "python_planner.py"
    assert "impls.offsets_planner.validate" in {e["module"] for e in got.pop("imports")}
    assert got == {"module": "impls.offsets_planner.python_planner", "file": "impls/offsets_planner/python_planner.py",
                   "sha256": hashlib.sha256(path.read_bytes()).hexdigest()}
    assert "/" + got["file"] in str(path)  # relative to the import root: no machine's path


def test_package_module_source_names_its_init():
    got = source_digest("impls.offsets_planner:get_planner")
    assert got["file"] == "impls/offsets_planner/__init__.py" and got["module"] == "impls.offsets_planner"


def test_external_and_unknown_planners():
    assert source_digest("tests.planted.wrong_planners:off_by_one_scan")["module"] == "tests.planted.wrong_planners"
    assert source_digest("no_such_module_xyz:launch") is None
    assert source_digest("nonexistent-builtin") is None


def test_changed_code_lists_only_planners_whose_file_changed():
    def fp(**shas):
        return {"planners": {n: {"source": {"module": n, "file": n, "sha256": s} if s else None}
                             for n, s in shas.items()}}

    old = fp(a="1" * 64, b="2" * 64, c=None, gone="3" * 64)
    new = fp(a="1" * 64, b="4" * 64, c="5" * 64, new="6" * 64)
    assert changed_code(old, new) == ["b (222222222222 -> 444444444444)"]
    assert changed_code(None, new) == []


def test_the_probe_answers_help_and_a_wrong_argument_count_without_importing_anything():
    import subprocess
    import sys

    def probe(*args):
        return subprocess.run([sys.executable, "-m", "impls.offsets_planner.probe", *args],
                              capture_output=True, text=True, timeout=120)

    shown = probe("--help")
    assert shown.returncode == 0 and "import an external planner's module" in shown.stdout
    for args in ((), ("a:b", "c:d")):
        wrong = probe(*args)
        assert wrong.returncode == 2 and wrong.stderr.strip() == (
            "usage: python -m impls.offsets_planner.probe module.path:attr")
        assert "conformance-probe" not in wrong.stdout
