"""Which source file a planner module is, read by the process that asks, without running the module.

An external planner's module runs only in children (the probe, the isolation worker), and
whatever such a process prints is the module's own word: its top level can rebind any function
there, set its own ``__file__``, or leave a process behind that prints after the probe exited
(``tests/planted/forges_probe.py``). So the source digest a run records (:func:`digest`) is
computed here, in the harness's process, from the file the import system *would* load: each
finder of ``sys.meta_path`` asked in turn, level by level, a package's ``__path__`` taken from
its spec (``submodule_search_locations``) rather than from importing it, so that no package
``__init__`` of the planner's runs either.

What it pins is that one file as the harness read it: a module that loads other code (another
module, a file it ``exec``\\ s, a package ``__init__`` that changes its ``__path__`` at run time) runs
code the digest does not name, as it always could.
"""

from __future__ import annotations

import hashlib
import importlib.machinery
import os
import sys


def find_source(module_name: str) -> str | None:
    """The path of the source file (``.py``) the import of ``module_name`` would load (a
    package's ``__init__.py``), or None when no finder finds it, a level is not a package, or it
    has no source file (a namespace package, an extension module). Nothing is imported."""
    search, spec = None, None
    parts = module_name.split(".")
    for depth in range(1, len(parts) + 1):
        name = ".".join(parts[:depth])
        spec = _find_spec(name, search)
        if spec is None:
            return None
        if depth < len(parts):
            search = spec.submodule_search_locations
            if not search:
                return None
    origin = spec.origin if spec.has_location else None
    if not origin or not origin.endswith(tuple(importlib.machinery.SOURCE_SUFFIXES)):
        return None
    return origin


def _find_spec(name: str, search):
    for finder in sys.meta_path:
        find = getattr(finder, "find_spec", None)
        if find is None:
            continue
        try:
            spec = find(name, None if search is None else list(search))
        except (ImportError, ValueError, OSError):
            continue
        if spec is not None:
            return spec
    return None


def digest(module_name: str, path: str | None) -> dict | None:
    """``{"module", "file", "sha256"}`` of ``module_name`` whose source is ``path``: ``file``
    relative to the folder the module is imported from (``impls/offsets_planner/triton_planner.py``,
    so that no machine's path lands in a results file), ``sha256`` the file's bytes'. None when
    ``path`` is None or cannot be read."""
    if path is None:
        return None
    try:
        with open(path, "rb") as handle:
            sha = hashlib.sha256(handle.read()).hexdigest()
    except OSError:
        return None
    parts = module_name.split(".")
    tail = (*parts, "__init__.py") if os.path.basename(path) == "__init__.py" else \
        (*parts[:-1], parts[-1] + ".py")
    return {"module": module_name, "file": "/".join(tail), "sha256": sha}
