"""Which file the import of a module would load from given folders, read without importing
anything and without adding the folders to ``sys.path``: a run's recorded ``PYTHONPATH`` and
planner folders, read back by a report, and the planner folders, where a planner's child finds
its module (:mod:`impls.planner_path`). The same checks as :func:`impls.source_file.lookup`."""

from __future__ import annotations

import importlib.machinery
import os

from impls.source_file import (_SOURCE_SUFFIXES, REFUSED_NO_SOURCE, _runs_its_file,
                               _SourceFileLoader)

__all__ = ["location_in", "lookup_in"]

_FileFinder = importlib.machinery.FileFinder
_LOADERS = ((importlib.machinery.ExtensionFileLoader, list(importlib.machinery.EXTENSION_SUFFIXES)),
            (importlib.machinery.SourceFileLoader, list(importlib.machinery.SOURCE_SUFFIXES)),
            (importlib.machinery.SourcelessFileLoader, list(importlib.machinery.BYTECODE_SUFFIXES)))
"""The loaders the import's own path hook gives each folder's finder, in its order."""


def lookup_in(module_name: str, folders: list[str]) -> tuple[str | None, str | None]:
    """:func:`lookup` of ``module_name`` in ``folders`` alone, as the standard path finder would
    search them (a run's ``PYTHONPATH`` or planner folders, read back by a report; the planner
    folders, where a planner's child finds it): :func:`_spec_in`, then the checks of
    :func:`lookup` (a module the import would load from bytecode or an extension is refused:
    :data:`REFUSED_NO_SOURCE`). Nothing is imported and nothing is added to ``sys.path``, so a
    module planted in those folders is never run by the asking process."""
    spec = _spec_in(module_name, folders)
    if spec is None:
        return None, None
    origin = spec.origin
    if type(origin) is not str:
        return None, None
    if type(spec.loader) is not _SourceFileLoader or not origin.endswith(_SOURCE_SUFFIXES):
        return None, REFUSED_NO_SOURCE
    return _runs_its_file(origin)


def location_in(module_name: str, folders: list[str]) -> str | None:
    """The file the import of ``module_name`` from ``folders`` would load, of any kind (source,
    bytecode, extension), or None: where it lies, not what it runs."""
    spec = _spec_in(module_name, folders)
    return spec.origin if spec is not None and isinstance(spec.origin, str) else None


def _spec_in(module_name: str, folders: list[str]):
    """The spec the standard path finder gives ``module_name`` in ``folders`` (absolute ones),
    level by level: each folder asked in turn by a plain :class:`importlib.machinery.FileFinder`
    with the import's own loaders (extension modules, source, bytecode; a package before a
    module), a namespace package's portions gathered. None when a level is not found."""
    search = [f for f in folders if isinstance(f, str) and os.path.isabs(f)]
    parts = module_name.split(".")
    spec = None
    for depth in range(1, len(parts) + 1):
        name, spec, portions = ".".join(parts[:depth]), None, []
        for folder in search:
            found = _FileFinder(folder, *_LOADERS).find_spec(name)
            if found is None:
                continue
            if found.loader is None:  # a namespace package's portion
                portions.extend(found.submodule_search_locations or [])
                continue
            spec = found
            break
        if spec is None and not (portions and depth < len(parts)):
            return None
        if depth < len(parts):
            search = portions if spec is None else list(spec.submodule_search_locations or [])
            if not search:
                return None
    return spec
