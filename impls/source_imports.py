"""The local files a planner's source imports, found and read without running any of them.

A planner module is often a thin launcher: the kernel lives in a sibling module it imports
(``from mykernels.scan import plan_kernel``). A digest of the launcher's file alone would call a
run "the same code" after the kernel changed. So beside the planner's own file
(:func:`impls.source_file.digest`), a run records every module its source imports, statically and
transitively, that is imported from the same folder as the planner (its *import root*: the
``sys.path`` entry the planner's package or module sits in) or from any other folder of
``$CONFORMANCE_PLANNER_PATH`` (all of them the entrant's), each with its file's SHA-256:

* read from each file's syntax tree (:mod:`ast`), never by importing it: ``import a.b``,
  ``from a import b`` (``a``, and ``a.b`` where that is a module), relative imports resolved
  against the module's package, and ``importlib.import_module("x")`` / ``__import__("x")`` with a
  literal name; the packages above each module (their ``__init__.py`` runs at import) too;
* each name looked up as the import would (:func:`impls.source_file.lookup`: the same finders,
  the same refusals; then in ``$CONFORMANCE_PLANNER_PATH``, as a planner's child finds it); a module whose import root differs (the standard library, an installed
  distribution, a virtual environment inside the checkout) is not the entrant's code and is left
  out;
* a local module whose file cannot be pinned (lookup refused, cached bytecode of other code,
  unreadable) is recorded with ``file`` and ``sha256`` null: "cannot be verified", never
  "unchanged".

What this cannot see stays as before: code loaded by a computed name, a file ``exec``'d, a
module fetched at run time. ``MAX_IMPORTS`` bounds the walk: the first local module past it is
recorded with a null digest ("cannot be verified"), never left out as if there were no more.
"""

from __future__ import annotations

import ast
import os

from impls.folder_lookup import location_in, lookup_in
from impls.source_file import (REFUSED_NO_SOURCE, digest, location_of, lookup, origin_of,
                               planner_folders)

__all__ = ["MAX_IMPORTS", "digest_with_imports", "import_root", "local_imports"]

MAX_IMPORTS = 500
"""The most local modules one digest walks; a larger tree is cut there, the first local module past
it recorded with a null digest, so that the digest reads "cannot be verified", never "unchanged"."""

_DYNAMIC = frozenset({"import_module", "__import__"})


def import_root(module_name: str, path: str) -> str:
    """The folder ``module_name`` is imported from, given its source file ``path``: ``path`` less
    one folder per dotted part (and the ``__init__.py`` of a package)."""
    root = os.path.dirname(os.path.abspath(path))
    depth = module_name.count(".") + os.path.basename(path).startswith("__init__.")
    for _ in range(depth):
        root = os.path.dirname(root)
    return root


def _package(module_name: str, path: str) -> str:
    """The package relative imports in ``module_name`` resolve against."""
    if os.path.basename(path) == "__init__.py":
        return module_name
    return module_name.rpartition(".")[0]


def imported_names(module_name: str, path: str, source: bytes) -> list[str]:
    """Every module name ``source`` (the file ``path`` of ``module_name``) may import, in order of
    appearance: see the module docstring. A source that does not parse gives none (its import
    fails, or the digest of its own file already tells it changed)."""
    try:
        tree = ast.parse(source, filename=path)
    except (SyntaxError, ValueError):
        return []
    names: list[str] = []
    package = _package(module_name, path)
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.extend(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".") if package else []
                if node.level > len(parts):  # beyond the top-level package: fails
                    continue
                parts = parts[:len(parts) - (node.level - 1)]
                base = ".".join(p for p in (*parts, base) if p)
            if not base:
                continue
            names.append(base)
            names.extend(f"{base}.{alias.name}" for alias in node.names if alias.name != "*")
        elif isinstance(node, ast.Call) and node.args:
            func, first = node.func, node.args[0]
            called = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
            if called in _DYNAMIC and isinstance(first, ast.Constant) \
                    and isinstance(first.value, str) and not first.value.startswith("."):
                names.append(first.value)
    out: list[str] = []
    for name in names:
        parts = name.split(".")
        for i in range(1, len(parts) + 1):  # the packages above it run their __init__ first
            prefix = ".".join(parts[:i])
            if prefix not in out:
                out.append(prefix)
    return out


def local_imports(module_name: str, path: str) -> list[dict]:
    """``[{"module", "file", "sha256"}]`` of every module ``module_name`` (source file ``path``)
    imports from its own import root or a planner folder, transitively, sorted by module name; the planner's own
    packages above it included, the planner itself not. ``file`` / ``sha256`` are null where the
    file cannot be pinned (see the module docstring)."""
    roots = {os.path.realpath(import_root(module_name, path)),
             *(os.path.realpath(folder) for folder in planner_folders())}
    top = module_name.split(".")[0]
    seen = {module_name}
    queue = [(module_name, path)]
    found: dict[str, dict] = {}
    parents = module_name.split(".")[:-1]
    pending = [".".join(parents[:i]) for i in range(1, len(parents) + 1)]
    while queue or pending:
        if pending:
            names = pending
            pending = []
        else:
            name, file = queue.pop(0)
            try:
                with open(file, "rb") as handle:
                    source = handle.read()
            except OSError:
                continue
            names = imported_names(name, file, source)
        for name in names:
            if name in seen:
                continue
            seen.add(name)
            where, refused, local = _place(name, roots)
            if not local and (refused is None or name.split(".")[0] != top):
                continue  # not found, elsewhere on the path, or refused outside its package
            if len(found) >= MAX_IMPORTS:  # the walk is cut: what lies past it is unverifiable
                found[name] = {"module": name, "file": None, "sha256": None}
                return [found[n] for n in sorted(found)]
            entry = digest(name, where) if where is not None else None
            found[name] = entry or {"module": name, "file": None, "sha256": None}
            if entry is not None:
                queue.append((name, where))
    return [found[name] for name in sorted(found)]


def _place(name: str, roots: set[str]) -> tuple[str | None, str | None, bool]:
    """Module ``name`` as a planner's child finds it (this process's import system, then the
    planner folders): ``(source file, None, True)`` with its import root among ``roots`` (real
    paths: the planner's own and every planner folder); ``(None, why, True)`` there but not
    pinnable (bytecode or an extension alone, cached bytecode of other code:
    recorded with a null digest, never left out); ``(None, why, False)`` when the lookup is
    refused before its place can be told; ``(None, None, False)`` when not found or elsewhere."""
    located = location_of(name)
    check = lookup
    if located is None and planner_folders():
        located = location_in(name, planner_folders())
        check = lambda n: lookup_in(n, planner_folders())  # noqa: E731
    if located is None:
        refused = origin_of(name)[1]
        return None, refused if refused != REFUSED_NO_SOURCE else None, False
    if os.path.realpath(import_root(name, located)) not in roots:
        return None, None, False
    return (*check(name), True)


def digest_with_imports(module_name: str, path: str | None) -> dict | None:
    """:func:`impls.source_file.digest` of the planner's file, with ``imports``:
    :func:`local_imports`. None where the digest is None."""
    own = digest(module_name, path)
    if own is None:
        return None
    return {**own, "imports": local_imports(module_name, path)}
