"""Lay a release's launcher out from its wheel, with the release's own JIT build machinery, as a
subject's upstream tree says (``UPSTREAM_TREE`` or ``UPSTREAM_ENTRY`` of its subject module, read
by :func:`conformance.upstream.entry_subject.tree_facts`; that module lists the attributes).

The launcher's module (``START``) and those of ``EXTRA_STARTS`` the wheel has are laid out byte for
byte (RECORD-checked) with every ``sglang`` module they reach through unconditional module-level
imports inside ``CODE_ROOTS``. The ``__init__`` files under ``REAL_PACKAGE_ROOT`` are the wheel's
own; every other parent package is an empty one of ours, so that sglang's top ``__init__`` never
runs. Every wheel file under ``DATA_ROOTS`` is copied too, and the wheel's ``METADATA``. **One
stand-in**, ``STAND_IN_MODULE`` (its text ``STAND_IN_SOURCE``), gives the names of
``STAND_IN_NAMES`` and nothing else.

Imports that only run in a function or under a module-level ``if`` and that fall outside the layout
are listed in ``tree.json`` (``not_laid_out``), never stubbed; an unconditional one outside the
layout is an :class:`EntriesLayoutError`. ``tree.json`` beside ``site/`` names the release, the
wheel and its SHA-256, every file copied with its RECORD SHA-256, the stand-in and the synthetic
packages; :func:`check_tree` re-hashes a tree laid out earlier (one carried to a machine without
the wheel). Nothing here names a subject.
"""

from __future__ import annotations

import ast
import json
import shutil
import sys
from dataclasses import asdict, dataclass, field
from pathlib import Path

from conformance.upstream.release_tree import _parents, _path
from conformance.upstream.wheel import Wheel, file_sha256, sha256_hex

TREE_JSON = "tree.json"
EMPTY_INIT = '"""Empty parent package written by planner-conformance (not sglang\'s __init__)."""\n'


class EntriesLayoutError(RuntimeError):
    """No such launcher in the wheel, or an unconditional import this layout will not stub."""


@dataclass
class EntriesTree:
    """A laid-out release: ``site`` goes first on PYTHONPATH; ``files`` maps each wheel file copied
    to its RECORD SHA-256 (hex)."""

    release: str
    wheel: str
    wheel_sha256: str
    site: str
    module: str
    launcher: str
    files: dict[str, str]
    stand_ins: dict[str, str]
    synthetic_packages: list[str]
    environment: list[str]
    not_laid_out: list[str] = field(default_factory=list)


def _imports_with_context(source: bytes) -> list[tuple[str, int, str, tuple[str, ...]]]:
    """(context, line, module, names) of every absolute import in ``source``; context is
    ``module`` (runs on import), ``conditional`` (under a module-level ``if``) or ``function``.
    ``if TYPE_CHECKING:`` blocks are skipped."""
    found = []

    def visit(nodes, context):
        for node in nodes:
            if isinstance(node, ast.Import):
                found.extend((context, node.lineno, a.name, ()) for a in node.names)
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    raise EntriesLayoutError(f"relative import (level {node.level}) not followed")
                found.append((context, node.lineno, node.module, tuple(a.name for a in node.names)))
            elif isinstance(node, ast.If):
                if "TYPE_CHECKING" in ast.unparse(node.test):
                    continue
                inner = "conditional" if context == "module" else context
                visit(node.body + node.orelse, inner)
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                visit(node.body, "function")
            elif isinstance(node, ast.ClassDef):
                visit(node.body, context)
            elif isinstance(node, (ast.Try, ast.With)):
                visit(node.body + getattr(node, "orelse", []) + getattr(node, "finalbody", [])
                      + [h for x in getattr(node, "handlers", []) for h in x.body], context)
            else:
                visit([c for c in ast.iter_child_nodes(node) if isinstance(c, ast.stmt)], context)

    visit(ast.parse(source).body, "module")
    return found


def _module_file(wheel: Wheel, module: str) -> str | None:
    for candidate in (_path(module), module.replace(".", "/") + "/__init__.py"):
        if candidate in wheel.record:
            return candidate
    return None


def _in_roots(path: str, roots: tuple[str, ...]) -> bool:
    return any(path == r or path.startswith(r) for r in roots)


def closure(wheel: Wheel, facts) -> tuple[dict[str, bytes], set[str], set[str], list[str]]:
    """The wheel's Python files the launcher of ``facts`` (a subject's upstream tree) and those of
    its ``EXTRA_STARTS`` the wheel has need, transitively.

    Returns (files: path -> RECORD-checked bytes, stand-in names used, environment modules,
    not_laid_out: one line per conditional / function-level import left out).
    Raises EntriesLayoutError for an unconditional import outside the layout.
    """
    files: dict[str, bytes] = {}
    stand_in: set[str] = set()
    environment: set[str] = set()
    left_out: list[str] = []
    todo = [facts.START, *(p for p in facts.EXTRA_STARTS if p in wheel.record)]
    while todo:
        path = todo.pop()
        if path in files:
            continue
        files[path] = wheel.member_bytes(path)
        parent = path.rsplit("/", 1)[0]
        while parent.startswith(facts.REAL_PACKAGE_ROOT.rstrip("/")):
            if f"{parent}/__init__.py" in wheel.record:
                todo.append(f"{parent}/__init__.py")  # Python runs it before any submodule
            parent = parent.rsplit("/", 1)[0]
        for context, line, module, names in _imports_with_context(files[path]):
            where = f"{path}:{line} {context}-level: {module}" + (f" ({', '.join(names)})" if names else "")
            top = module.split(".")[0]
            if top != "sglang":
                if top not in sys.stdlib_module_names:
                    environment.add(f"{top} ({context})")
                continue
            if module == facts.STAND_IN_MODULE:
                extra = sorted(set(names) - set(facts.STAND_IN_NAMES))
                if extra and context == "module":
                    raise EntriesLayoutError(f"{where}: needs {extra}, which the stand-in does not give")
                stand_in.update(names)
                continue
            targets = [_module_file(wheel, f"{module}.{n}") for n in names]
            if not (names and all(targets)):
                targets = [_module_file(wheel, module)]
            if all(t is not None and _in_roots(t, facts.CODE_ROOTS) for t in targets):
                todo.extend(targets)
            elif context == "module":
                raise EntriesLayoutError(f"{where}: outside {', '.join(facts.CODE_ROOTS)} or not a module "
                                         f"file of the wheel: not loaded, not stubbed")
            else:
                left_out.append(where)
    return files, stand_in, environment, sorted(set(left_out))


def build_entries_tree(wheel: Wheel, folder: Path, facts=None) -> EntriesTree:
    """Lay the launcher of ``facts`` (a subject's upstream tree; default that of the one subject
    defining ``UPSTREAM_ENTRY``) out under ``folder/site`` (replaced) and write ``folder/tree.json``.

    Raises:
        EntriesLayoutError: no such launcher, or an import this layout cannot satisfy.
        RecordError: a file whose bytes do not match RECORD.
    """
    if facts is None:
        from conformance.upstream.entry_subject import tree_facts

        facts = tree_facts()
    if facts.START not in wheel.record:
        raise EntriesLayoutError(f"sglang {wheel.release} has no {facts.LAUNCHER} ({facts.START})")
    files, stand_in, environment, left_out = closure(wheel, facts)
    for name in wheel.record:
        if name.startswith(tuple(facts.DATA_ROOTS)):
            files[name] = wheel.member_bytes(name)
    metadata = f"sglang-{wheel.release}.dist-info/METADATA"
    if metadata in wheel.record:  # importlib.metadata.version("sglang") names the release
        files[metadata] = wheel.member_bytes(metadata)
    folder = Path(folder)
    site = folder / "site"
    if site.exists():
        shutil.rmtree(site)
    stand_in_path = _path(facts.STAND_IN_MODULE)
    python_files = [p for p in files if p.endswith(".py")] + [stand_in_path]
    synthetic = [p for p in _parents(python_files) if f"{p}/__init__.py" not in files]
    for package in synthetic:
        (site / package).mkdir(parents=True, exist_ok=True)
        (site / package / "__init__.py").write_text(EMPTY_INIT)
    for path, data in files.items():
        (site / path).parent.mkdir(parents=True, exist_ok=True)
        (site / path).write_bytes(data)
    (site / stand_in_path).write_text(facts.STAND_IN_SOURCE)
    tree = EntriesTree(
        release=wheel.release, wheel=wheel.path.name, wheel_sha256=wheel.sha256, site=str(site),
        module=facts.START[:-3].replace("/", "."), launcher=facts.LAUNCHER,
        files={p: sha256_hex(d) for p, d in sorted(files.items())},
        stand_ins={facts.STAND_IN_MODULE: facts.STAND_IN_NOTE
                   + f" (names imported: {', '.join(sorted(stand_in))})"},
        synthetic_packages=[p.replace("/", ".") for p in synthetic],
        environment=sorted(environment), not_laid_out=left_out)
    (folder / TREE_JSON).write_text(json.dumps(asdict(tree), indent=1) + "\n")
    return tree


def load_tree(folder: Path) -> EntriesTree:
    """The tree laid out earlier in ``folder`` (its ``tree.json``); ``site`` is re-pointed at
    ``folder/site`` (a carried copy lives elsewhere). Raises OSError / ValueError when absent."""
    folder = Path(folder)
    doc = json.loads((folder / TREE_JSON).read_text(encoding="utf-8"))
    doc["site"] = str(folder / "site")
    return EntriesTree(**doc)


def check_tree(tree: EntriesTree) -> list[str]:
    """Every laid-out wheel file whose bytes no longer match the SHA-256 it was copied with
    (RECORD's), as ``path (why)``; empty when the tree is intact."""
    bad = []
    for path, digest in tree.files.items():
        target = Path(tree.site) / path
        if not target.is_file():
            bad.append(f"{path} (missing)")
        elif file_sha256(target) != digest:
            bad.append(f"{path} (differs from RECORD)")
    return bad
