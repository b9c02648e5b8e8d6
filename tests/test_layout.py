"""The folders are the architecture: each folder of ``conformance/`` imports only itself, the folders
below it and the three leaf modules; ``impls/`` never imports the harness; README's layout table names
every folder that exists.

Order, bottom to top (README "Layout"): corpus < engine < robustness < reporting < plugin < bench
< upstream;
``conformance/paths.py``, ``conformance/fingerprint.py`` and ``conformance/arg_types.py`` are leaves
(they import nothing from the harness but each other); ``cli.py``, ``record.py``, ``repro.py`` and ``__main__.py`` are commands and may use anything.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
LAYERS = ("corpus", "engine", "robustness", "reporting", "plugin", "bench", "upstream")
LEAVES = ("paths", "fingerprint", "arg_types")
COMMANDS = ("cli", "record", "repro", "__main__", "__init__", "test_corpus")


def imported_modules(path: Path) -> list[tuple[int, str]]:
    """(line, module) of every ``import X`` / ``from X import ...`` in ``path``, at any depth."""
    tree = ast.parse(path.read_text(), filename=str(path))
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.extend((node.lineno, alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            out.extend((node.lineno, f"{node.module}.{alias.name}") for alias in node.names)
    return out


def rank(module: str) -> int | None:
    """Layer index of a ``conformance.*`` module name; -1 for leaves; None for commands or other."""
    parts = module.split(".")
    if parts[0] != "conformance" or len(parts) < 2:
        return None
    if parts[1] in LAYERS:
        return LAYERS.index(parts[1])
    if parts[1] in LEAVES:
        return -1
    return None


def harness_files(folder: str) -> list[Path]:
    return sorted((ROOT / folder).rglob("*.py"))


def test_rank_reads_module_names():
    assert rank("conformance.corpus.loader") == 0
    assert rank("conformance.bench.timing") == 5
    assert rank("conformance.paths") == -1
    assert rank("conformance.cli") is None
    assert rank("impls.offsets_planner.contract") is None


@pytest.mark.parametrize("path", harness_files("conformance"), ids=lambda p: str(p.relative_to(ROOT)))
def test_no_import_runs_back_up(path: Path):
    rel = path.relative_to(ROOT / "conformance")
    own = rank("conformance." + ".".join(rel.with_suffix("").parts))
    if own is None:  # a command at the top: it may use every layer
        assert rel.stem in COMMANDS or len(rel.parts) == 1, f"{rel}: top-level module not a command"
        return
    upward = []
    for line, module in imported_modules(path):
        target = rank(module)
        if module.startswith("conformance") and target is None and module != "conformance":
            upward.append(f"line {line}: {module} (a command)")
        elif target is not None and target > own:
            upward.append(f"line {line}: {module}")
    assert not upward, f"conformance/{rel} imports from above its own folder: {upward}"


def _in_a_subject_harness(path: Path) -> bool:
    """Whether ``path`` is under ``impls/<subject>/harness/``: a subject's own harness-side tools
    (its benchmark workloads and design sweeps, its upstream judges), which use the harness."""
    parts = path.relative_to(ROOT / "impls").parts
    return len(parts) > 2 and parts[1] == "harness"


@pytest.mark.parametrize("path", [p for p in harness_files("impls") if not _in_a_subject_harness(p)],
                         ids=lambda p: str(p.relative_to(ROOT)))
def test_impls_never_import_the_harness(path: Path):
    bad = [m for _, m in imported_modules(path)
           if m.split(".")[0] in ("conformance", "tests") or ".harness" in m]
    assert not bad, f"{path.relative_to(ROOT)} imports the harness: {bad}"


@pytest.mark.parametrize("path", [p for p in harness_files("impls") if _in_a_subject_harness(p)],
                         ids=lambda p: str(p.relative_to(ROOT)))
def test_a_subject_harness_uses_no_test_and_no_other_subject_harness(path: Path):
    own = path.relative_to(ROOT / "impls").parts[0]
    bad = [m for _, m in imported_modules(path) if m.split(".")[0] == "tests"
           or (".harness" in m and not m.startswith(f"impls.{own}.harness"))]
    assert not bad, f"{path.relative_to(ROOT)} imports {bad}"


def test_a_subject_harness_is_told_apart():
    assert _in_a_subject_harness(ROOT / "impls" / "x" / "harness" / "bench.py")
    assert not _in_a_subject_harness(ROOT / "impls" / "x" / "harness.py")
    assert not _in_a_subject_harness(ROOT / "impls" / "x" / "contract.py")


def test_readme_layout_table_matches_the_tree():
    text = (ROOT / "README.md").read_text()
    section = text.split("## Layout", 1)[1]
    named = set(re.findall(r"`(conformance/[a-z_]+/|impls/|cases/|reports/|tests/[a-z_]*/?)`", section))
    folders = {f"conformance/{d.name}/" for d in (ROOT / "conformance").iterdir()
               if d.is_dir() and (d / "__init__.py").exists()}
    missing = sorted(folders - named)
    assert not missing, f"README's layout table does not name {missing}"
    stale = sorted(n for n in named if not (ROOT / n).is_dir())
    assert not stale, f"README's layout table names folders that do not exist: {stale}"


SUBJECT_NAMES = re.compile(r"offsets_planner|entries_planner|canary_plan|offsets-planner|"
                           r"entries-planner|canary-plan|offsets planner|entries planner",
                           re.IGNORECASE)
"""How a module names one of the subjects of ``impls/`` (package, case folder or prose)."""
def _naming_a_subject() -> list[str]:
    """Every file of ``conformance/`` (modules, templates, data) whose text names a subject."""
    files = [p for p in (ROOT / "conformance").rglob("*") if p.is_file()
             and "__pycache__" not in p.parts and p.suffix not in (".pyc",)]
    return sorted(str(p.relative_to(ROOT)) for p in files
                  if SUBJECT_NAMES.search(p.read_text(errors="replace")))


def test_no_module_of_the_harness_names_a_subject():
    assert _naming_a_subject() == []


def test_the_subject_names_are_recognised(tmp_path):
    for text in ("from impls.offsets_planner import x", "cases/entries-planner/", "the canary_plan",
                 "an entries planner", "<h1>Offsets-planner conformance</h1>"):
        assert SUBJECT_NAMES.search(text)
    assert not SUBJECT_NAMES.search("the corpus subject's planners (cases/<subject>/)")
