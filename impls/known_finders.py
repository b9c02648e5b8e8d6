"""Which import finders :mod:`impls.source_file` asks for a planner module's source file, and
when it refuses (no digest rather than a false one).

A finder is code, and can answer this module otherwise than the import (it sees its caller, or
keeps state that a ``set`` subclass or a ``str`` subclass key makes caller-sensitive): asked
by impls/source_file.py, it says nothing and the next finder names a pristine file. So :func:`find_source` asks only
finders of known types and refuses (no digest) while one ahead of the finder that answers, or
that one, is of another type. A finder counts only of its exact type (a subclass can override
anything), with an instance state of plain data and no method of its own, and only while the
import system's modules, the known finders' classes and modules and ``builtins.__import__`` read
as when this module was imported (before any planner code runs in the harness's process; what
this module calls itself is bound then too; the snapshot and its check:
:mod:`impls.import_snapshot`). The known types:

* on ``sys.meta_path``: the standard library's ``BuiltinImporter``, ``FrozenImporter`` and
  ``PathFinder``; pytest's assertion-rewriting finder (``_pytest.assertion.rewrite``, as pytest
  makes it); and the finders a ``.pth`` file of an installed package puts there at interpreter
  start (:mod:`impls.editable_finders` says which it knows, from which file each rule comes, and
  how each is asked; virtualenv's: :mod:`impls.virtualenv_finder`): setuptools'
  ``_distutils_hack.DistutilsMetaFinder``, numba-cuda's ``_numba_cuda_redirector.NumbaCudaFinder``
  (refused for a name holding ``numba.cuda``), setuptools' ``_EditableFinder`` of each editable
  install (``pip install -e``) of this checkout or of a module that is exactly setuptools'
  template for its own ``MAPPING``, and virtualenv's ``_virtualenv._Finder`` (never asked: None
  but for the names it patches, which are refused);
* as path-entry finders (``sys.path_importer_cache``; the path finder's search is repeated here
  entry by entry): ``FileFinder``, ``zipimporter`` and those editable installs'
  ``_EditableNamespaceFinder``; every path entry before the one that answers must be an exact
  ``str``, and so must every key of the cache (a ``str`` subclass hashes as it likes).

Not covered: code that runs in the harness's process after this module's import (the bench
imports an external planner there) can still rebind this module's own names (and those of
:mod:`impls.import_snapshot`, :mod:`impls.editable_finders`, :mod:`impls.virtualenv_finder` and
:mod:`impls.finder_data`) or
its callers' (``registry.find_source``), or change a builtin or a library this module does not
check; code that runs before it (a ``.pth`` file, ``sitecustomize``) can make any finder look
known. A path hook (``sys.path_hooks``) is code that runs here, as in the import, for a folder
the path finder has not met yet (only the finder it makes is judged). A path entry of another
type (a ``pathlib.Path`` on ``sys.path``) before the answer costs the digest, as does a
third-party finder of a known type that was not on ``sys.meta_path`` yet when this module was
imported.
"""


from __future__ import annotations

import importlib._bootstrap_external as _bootstrap_external
import importlib.machinery
import os
import sys
import types
import zipimport

from impls import editable_finders as _pth
from impls.finder_data import plain_state as _plain_state
from impls.import_snapshot import _REWRITE, _REWRITE_HOOK

# --- references taken when this module is imported (before any planner code runs here) --------

_INSTANCE_DICT = object.__getattribute__
_SourceFileLoader = importlib.machinery.SourceFileLoader
_LOADER_CLASSES = (importlib.machinery.ExtensionFileLoader, _SourceFileLoader,
                   importlib.machinery.SourcelessFileLoader)
_PathFinder = importlib.machinery.PathFinder
_FileFinder = importlib.machinery.FileFinder
_ZipImporter = zipimport.zipimporter
_ModuleSpec = importlib.machinery.ModuleSpec
_STANDARD_FINDERS = (importlib.machinery.BuiltinImporter, importlib.machinery.FrozenImporter)
_HERE = os.path.dirname(os.path.abspath(__file__))
_FILE_FINDER_STATE = frozenset(_INSTANCE_DICT(_FileFinder(_HERE, (_SourceFileLoader, [".py"])),
                                              "__dict__"))
"""The attributes a ``FileFinder`` instance has (``path``, ``_loaders``, ``_path_cache``...)."""
_ZIP_STATE = frozenset({"archive", "prefix", "_files"})
_PATH_ISABS = _bootstrap_external._path_isabs
_PATH_STAT = _bootstrap_external._path_stat


class Refused(Exception):
    """A finder of an unknown type, or in an unknown state, stands before the answer."""


_LOADER_NAMES = frozenset({"find_spec", "create_module", "exec_module", "get_code", "get_data",
                           "load_module", "_find_spec"})


def rewriting_module():
    """pytest's assertion-rewriting module: the one loaded when this module was imported, else
    the one loaded now (None when pytest is not loaded)."""
    if _REWRITE is not None:
        return _REWRITE
    rewrite = sys.modules.get("_pytest.assertion.rewrite")
    return rewrite if type(rewrite) is types.ModuleType else None


def is_rewriting_hook(finder) -> bool:
    """Whether ``finder`` is pytest's assertion-rewriting finder as pytest makes it: of exactly
    its class, whose loading methods are the ones of pytest's file and whose path finder is the
    standard one, with no attribute of a loading method's name of its own (an exact dict of exact
    str keys: a dict subclass or a str subclass key can hide one from a set of names)."""
    rewrite = rewriting_module()
    cls = getattr(rewrite, "AssertionRewritingHook", None)
    if cls is None or type(finder) is not cls or cls.__module__ != rewrite.__name__:
        return False
    if _REWRITE_HOOK is not None and cls is not _REWRITE_HOOK:
        return False
    if not all(hasattr(rewrite, n) for n in ("get_cache_dir", "PYC_TAIL", "rewrite_asserts")):
        return False  # a pytest whose bytecode cache this file cannot check: judged as any finder
    if cls.__dict__.get("_find_spec") != _PathFinder.find_spec:
        return False
    for method in ("find_spec", "create_module", "exec_module"):
        code = getattr(cls.__dict__.get(method), "__code__", None)
        if code is None or code.co_filename != rewrite.__file__:
            return False
    state = _INSTANCE_DICT(finder, "__dict__")
    return (type(state) is dict and all(type(key) is str for key in state)
            and _LOADER_NAMES.isdisjoint(state))


def find_spec(name: str, search):
    # Each finder of sys.meta_path in turn, as the import asks them, each of a known type and
    # state or the lookup is refused (Refused) before anything is asked of it.
    # pytest's assertion-rewriting finder claims every module of a distribution that has a pytest
    # plugin when that distribution's metadata is on sys.path (``python -m pytest`` in a checkout
    # installed with ``pip install -e``: its egg-info sits in the working directory), naming
    # itself as the loader; it asks the standard path finder (``PathFinder``, not the finders
    # after it on sys.meta_path) and loads that same source file with its assert statements
    # rewritten. Where it claims the module, the standard path finder's spec is judged (the
    # finders after it are never asked by the import); where it does not, the next finder's.
    # Any other finder's loader is still refused, and so is an instance of that class with a
    # loading method of its own (what it loads is its choice then).
    meta_path = sys.meta_path
    if type(meta_path) is not list:
        raise Refused  # a list subclass iterates as it likes
    for finder in list(meta_path):
        try:
            spec = _ask(finder, name, search)
        except (ImportError, ValueError, OSError):
            continue
        if spec is not None:
            return spec
    return None


def _ask(finder, name: str, search):
    """What meta path finder ``finder`` answers for ``name`` (searching ``search``, None at the
    top level) as the import would have it. Raises :class:`Refused` for a finder of an unknown
    type or state."""
    if finder is _PathFinder:
        return _path_search(name, search)
    if any(finder is known for known in _STANDARD_FINDERS):
        return finder.find_spec(name, search)
    if is_rewriting_hook(finder):
        standard = _path_search(name, search)  # first: the path finder it asks, entries judged
        spec = finder.find_spec(name, search)
        if spec is None:
            return None
        return standard if standard is not None and standard.origin == spec.origin else None
    answer = _pth.route(finder, name)
    if answer is _pth.ASK:
        return finder.find_spec(name, search)
    if answer is _pth.SILENT:
        return None
    if type(answer) is list:  # it asks the path finder in these folders: asked here
        return _path_search(name, answer)
    raise Refused


def _path_search(name: str, search):
    """The standard path finder's answer for ``name`` (``PathFinder.find_spec``: ``search``, or
    ``sys.path`` at the top level, entry by entry through ``sys.path_importer_cache``), each
    path-entry finder asked here only when it is known (:func:`_known_entry_finder`). An entry
    the cache does not hold yet gets its finder from ``sys.path_hooks`` as in the import (the
    path finder's own ``_path_importer_cache``, which caches it for the import too), judged
    then like any other.

    A relative entry (not the empty one, the working directory) that names a file or folder in
    the working directory refuses the lookup: its finder here was cached when this process first
    met it, while a child that imports the planner (the probe, an isolation worker) meets it
    afresh (``.pth`` files add such an entry again at each start: setuptools' editable install
    appends its namespace path hook's placeholder, ``__editable__.<dist>-<version>.finder.
    __path_hook__``, answered by the hook only while no folder of that name exists) and searches
    a folder of that name with a ``FileFinder``, ahead of every meta-path finder: a folder that
    planner code run earlier (the probe's import of the planner's package) can create, holding a
    module this lookup never names. Raises :class:`Refused`."""
    cache = sys.path_importer_cache
    if type(cache) is not dict or not all(type(key) is str for key in cache):
        raise Refused  # a key of its own type can answer one lookup and not another
    entries = sys.path if search is None else search
    if type(entries) is not list:
        raise Refused
    portions = []
    for entry in list(entries):
        if type(entry) is not str:
            raise Refused
        if entry and not _PATH_ISABS(entry) and _names_a_path(entry):
            raise Refused  # a child searches it afresh: see the docstring
        finder = _PathFinder._path_importer_cache(entry)
        if finder is None:
            continue
        if not _known_entry_finder(finder):
            raise Refused
        spec = finder.find_spec(name)
        if spec is None:
            continue
        if spec.loader is not None:
            return spec
        if spec.submodule_search_locations is None:
            raise Refused  # the import raises ImportError: it loads no file
        portions.extend(spec.submodule_search_locations)
    if not portions:
        return None
    spec = _ModuleSpec(name, None)
    spec.submodule_search_locations = portions
    return spec


def _names_a_path(entry: str) -> bool:
    """Whether ``entry`` names an existing file or folder (``stat`` as the import system's own
    ``_path_stat``, bound at import)."""
    try:
        _PATH_STAT(entry)
    except OSError:
        return False
    return True


def _known_entry_finder(finder) -> bool:
    """Whether path-entry finder ``finder`` is one whose answer this module can take: a
    ``FileFinder`` or a ``zipimporter`` of exactly that type whose state is plain data (a ``set``
    subclass cache could hide a file from one caller), or a known editable install's namespace
    finder (:func:`impls.editable_finders.known_entry_finder`)."""
    kind = type(finder)
    if kind is _FileFinder:
        return _plain_state(finder, _FILE_FINDER_STATE, _LOADER_CLASSES)
    if kind is _ZipImporter:
        return _plain_state(finder, _ZIP_STATE)
    return _pth.known_entry_finder(finder)

