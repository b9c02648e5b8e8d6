"""A thin launcher's kernel module is part of the code a run records (impls/source_imports.py):
its local imports, found in its syntax tree and pinned by SHA-256, flow to the report's staleness
check and to ``report --compare``."""

from __future__ import annotations

import hashlib
import importlib
import json
from pathlib import Path

import pytest

from conformance.reporting.code_changes import changed_code
from conformance.reporting.freshness import stale_reasons
from impls.offsets_planner.registry import source_digest
from impls.source_file import find_source
from impls.source_imports import digest_with_imports, import_root, imported_names

ROOT = Path(__file__).resolve().parent.parent

LAUNCHER = """\
import json
import importlib
import torch
from thinpkg.kernels.scan import plan
from . import helper
from .kernels import tables as _tables

def launch(**kwargs):
    importlib.import_module("thinpkg.late")
    return plan(**kwargs)
"""


@pytest.fixture
def thin(tmp_path, monkeypatch):
    """``thinpkg``: a launcher whose kernel, helper, tables and a late import live in sibling
    files, on ``sys.path``."""
    pkg = tmp_path / "thinpkg"
    (pkg / "kernels").mkdir(parents=True)
    files = {"__init__.py": "", "launcher.py": LAUNCHER, "helper.py": "X = 1\n",
             "late.py": "Y = 2\n", "kernels/__init__.py": "",
             "kernels/scan.py": "from thinpkg.kernels.tables import T\n\ndef plan(**kw):\n    return None\n",
             "kernels/tables.py": "T = (1, 2)\n", "unused.py": "Z = 3\n"}
    for rel, text in files.items():
        (pkg / rel).write_text(text)
    monkeypatch.syspath_prepend(str(tmp_path))
    importlib.invalidate_caches()
    return pkg


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_every_local_import_is_pinned_and_nothing_else(thin):
    got = digest_with_imports("thinpkg.launcher", find_source("thinpkg.launcher"))
    assert got["sha256"] == _sha(thin / "launcher.py")
    assert got["imports"] == [
        {"module": m, "file": f, "sha256": _sha(thin.parent / f)} for m, f in (
            ("thinpkg", "thinpkg/__init__.py"), ("thinpkg.helper", "thinpkg/helper.py"),
            ("thinpkg.kernels", "thinpkg/kernels/__init__.py"),
            ("thinpkg.kernels.scan", "thinpkg/kernels/scan.py"),
            ("thinpkg.kernels.tables", "thinpkg/kernels/tables.py"),
            ("thinpkg.late", "thinpkg/late.py"))]  # json, importlib, torch: other folders


def test_relative_imports_resolve_against_the_package():
    names = imported_names("a.b.c", "/x/a/b/c.py", b"from . import d\nfrom ..e import f\n"
                           b"from ...too_far import g\n")
    assert names == ["a", "a.b", "a.b.d", "a.e", "a.e.f"]
    assert imported_names("a.b", "/x/a/b/__init__.py", b"from .c import d\n") == \
        ["a", "a.b", "a.b.c", "a.b.c.d"]
    assert imported_names("a", "/x/a.py", b"this is not python (") == []
    assert import_root("a.b.c", "/x/a/b/c.py") == "/x"
    assert import_root("a.b", "/x/a/b/__init__.py") == "/x"


def test_the_kernel_file_edited_makes_the_results_stale(thin):
    source = digest_with_imports("thinpkg.launcher", find_source("thinpkg.launcher"))
    doc = {"fingerprint": {"commit": None, "planners": {"thinpkg.launcher:launch": {
        "source": source}}}}
    assert stale_reasons(doc, head="") == []
    (thin / "kernels" / "tables.py").write_text("T = (1, 3)\n")
    assert stale_reasons(doc, head="") == [
        "source changed since the run: thinpkg.launcher:launch (its import thinpkg.kernels.tables)"]
    (thin / "helper.py").unlink()
    importlib.invalidate_caches()
    assert stale_reasons(doc, head="") == [
        "source changed since the run: thinpkg.launcher:launch (its imports thinpkg.helper (gone), "
        "thinpkg.kernels.tables)"]


def test_an_import_the_run_could_not_pin_is_unverifiable_never_unchanged(thin):
    source = digest_with_imports("thinpkg.launcher", find_source("thinpkg.launcher"))
    source["imports"][1].update(file=None, sha256=None)
    doc = {"fingerprint": {"commit": None, "planners": {"thinpkg.launcher:launch": {
        "source": source}}}}
    assert stale_reasons(doc, head="") == [
        "source cannot be verified now: thinpkg.launcher:launch (its import thinpkg.helper: not "
        "pinned by the run)"]


def test_compare_names_the_changed_import():
    def fp(tables: str, imports: bool = True) -> dict:
        source = {"module": "m", "file": "m.py", "sha256": "1" * 64}
        if imports:
            source["imports"] = [{"module": "k", "file": "k.py", "sha256": "2" * 64},
                                 {"module": "t", "file": "t.py", "sha256": tables}]
        return {"planners": {"m:launch": {"source": source}}}

    assert changed_code(fp("3" * 64), fp("3" * 64)) == []
    assert changed_code(fp("3" * 64), fp("4" * 64)) == ["m:launch (its imports t)"]
    assert changed_code(fp("3" * 64, imports=False), fp("4" * 64)) == []  # an older run: unknown


def test_a_builtin_planner_pins_its_kernel_modules():
    """The Triton planner's kernels live in sibling modules: each is pinned."""
    got = source_digest("triton")
    pinned = {e["module"]: e["sha256"] for e in got["imports"]}
    for module in ("impls.offsets_planner.triton_roles", "impls.offsets_planner.validate"):
        path = ROOT / (module.replace(".", "/") + ".py")
        assert pinned[module] == _sha(path)
    assert not any(m.split(".")[0] in ("torch", "triton", "numpy") for m in pinned)
    json.dumps(got)  # a results file can hold it
