"""Planted planners of the eighteenth hostile review (tests/test_hostile18.py): each computes the
pure-Python planner's plan, right in every byte, and leaves its caller's process changed where
tests/test_hostile17.py's checks did not read (:data:`HARMS`: the environment and the import
system), or past the worker's own check (:func:`forges_then_changes_umask_late`).

The module each import-system harm hands its caller instead of the standard library's is
:data:`SHADOWED_MODULE` (``colorsys``: nothing the harness, torch or numpy imports), whose stand-in
has ``SHADOWED = True``.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import importlib.util
import os
import sys
import tempfile

from impls.offsets_planner.python_planner import launch as _launch
from tests.planted.hostile17_state import changes_umask_after_its_last_call, harm_planners

SHADOWED_MODULE = "colorsys"
"""The standard module whose next import the import-system harms answer."""
SHADOW = os.path.join(tempfile.gettempdir(), "hostile18-shadow")
"""A folder holding ``colorsys.py`` (``SHADOWED = True``)."""
STDLIB = os.path.dirname(os.__file__)
"""The standard library's folder."""


def _shadow_folder() -> str:
    os.makedirs(SHADOW, exist_ok=True)
    with open(os.path.join(SHADOW, f"{SHADOWED_MODULE}.py"), "w") as f:
        f.write("SHADOWED = True\n")
    return SHADOW


class _Finder(importlib.abc.MetaPathFinder):
    """Answers :data:`SHADOWED_MODULE` with the shadow folder's file."""

    def find_spec(self, name, path=None, target=None):
        if name != SHADOWED_MODULE:
            return None
        return importlib.util.spec_from_file_location(
            name, os.path.join(_shadow_folder(), f"{name}.py"))


class _Loader(importlib.machinery.SourceFileLoader):
    """A source loader that runs the shadow folder's file for :data:`SHADOWED_MODULE`."""

    def get_code(self, fullname):
        if fullname == SHADOWED_MODULE:
            return compile("SHADOWED = True\n", self.path, "exec")
        return super().get_code(fullname)


def _cache_a_finder() -> None:
    sys.path_importer_cache[STDLIB] = importlib.machinery.FileFinder(
        STDLIB, (_Loader, importlib.machinery.SOURCE_SUFFIXES))


HARMS = {
    "prepends_to_pythonpath": lambda: os.environ.__setitem__(
        "PYTHONPATH", os.pathsep.join([_shadow_folder(), os.environ.get("PYTHONPATH", "")])),
    "removes_path": lambda: os.environ.pop("PATH", None),
    "prepends_a_finder": lambda: sys.meta_path.insert(0, _Finder()),
    "prepends_a_path_hook": lambda: (
        sys.path_hooks.insert(0, lambda entry: (_ for _ in ()).throw(ImportError)),
        sys.path.insert(0, _shadow_folder())),
    "caches_a_finder_for_the_standard_library": _cache_a_finder,
    "removes_a_sys_path_folder": lambda: sys.path.remove(STDLIB),
}
"""Planner name -> what it does to its process after the right plan:

* ``PYTHONPATH`` with a folder of its own first (every Python child of its caller imports the
  planner's ``colorsys``), ``PATH`` removed (its caller and every child it starts lose it);
* a finder first on ``sys.meta_path``, a folder first on ``sys.path`` behind a path hook first on
  ``sys.path_hooks``, a finder of its own cached for the standard library's folder: the caller's
  next ``import colorsys`` runs the planner's file;
* the standard library's folder removed from ``sys.path`` (the caller's next import of a standard
  module not yet loaded fails)."""


globals().update(harm_planners(HARMS))


def appends_a_folder(**kwargs):
    """Right, and harmless to its caller: a folder appended last on ``sys.path`` (as
    ``setuptools`` does when imported) shadows nothing. Must pass."""
    _launch(**kwargs)
    if SHADOW not in sys.path:
        sys.path.append(SHADOW)


def forges_then_changes_umask_late(**kwargs):
    """The right plan; where the worker's state check is loaded it rebinds the check's code (so
    that no check in the worker's process reports anything, whatever reference the worker holds),
    and a thread of its own sets the umask to 0 once no call came for 0.3 s (hostile 17's late
    planner, :func:`tests.planted.hostile17_state.changes_umask_after_its_last_call`)."""
    checks = sys.modules.get("conformance.robustness.torch_state")
    if checks is not None:
        checks.changes.__code__ = (lambda before, after: []).__code__
    changes_umask_after_its_last_call(**kwargs)


def forges_and_lowers_open_files(**kwargs):
    """The right plan; the worker's check rebound (as above), then the soft limit of open files
    lowered to 512: its caller's sockets and files fail past 512."""
    _launch(**kwargs)
    import resource

    checks = sys.modules.get("conformance.robustness.torch_state")
    if checks is not None:
        checks.changes.__code__ = (lambda before, after: []).__code__
    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(512, hard), hard))
