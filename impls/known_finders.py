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
this module calls itself is bound then too). The known types:

* on ``sys.meta_path``: the standard library's ``BuiltinImporter``, ``FrozenImporter`` and
  ``PathFinder``; pytest's assertion-rewriting finder (``_pytest.assertion.rewrite``, as pytest
  makes it); setuptools' ``_distutils_hack.DistutilsMetaFinder`` and numba-cuda's
  ``_numba_cuda_redirector.NumbaCudaFinder`` (both put there at interpreter start by a ``.pth``
  file of the installed packages, ahead of ``PathFinder``; the latter refused for a name holding
  ``numba.cuda``, for which it asks every finder itself); the ``_EditableFinder`` of an editable
  install of this very checkout (``pip install -e``: its ``MAPPING`` sends ``impls`` to the folder
  this file is in; last on ``sys.meta_path``, it answers ``impls`` run from another folder);
* as path-entry finders (``sys.path_importer_cache``; the path finder's search is repeated here
  entry by entry): ``FileFinder``, ``zipimporter`` and that editable install's
  ``_EditableNamespaceFinder``; every path entry before the one that answers must be an exact
  ``str``, and so must every key of the cache (a ``str`` subclass hashes as it likes).

Not covered: code that runs in the harness's process after this module's import (the bench
imports an external planner there) can still rebind this module's own names or its callers'
(``registry.find_source``), or change a builtin or a library this module does not check; code
that runs before it (a ``.pth`` file, ``sitecustomize``) can make any finder look known. A path
hook (``sys.path_hooks``) is code that runs here, as in the import, for a folder the path finder
has not met yet (only the finder it makes is judged). A path entry of another type (a
``pathlib.Path`` on ``sys.path``) before the answer costs the digest, as does a third-party
finder of a known type that was not on ``sys.meta_path`` yet when this module was imported.
"""


from __future__ import annotations

import builtins
import importlib._bootstrap as _bootstrap
import importlib._bootstrap_external as _bootstrap_external
import importlib.machinery
import os
import pathlib
import sys
import types
import zipimport

# --- references taken when this module is imported (before any planner code runs here) --------

_MODULE_DICT = types.ModuleType.__dict__["__dict__"]
_CLASS_DICT = type.__dict__["__dict__"]
_INSTANCE_DICT = object.__getattribute__
_MODULE = types.ModuleType
_SourceFileLoader = importlib.machinery.SourceFileLoader
_LOADER_CLASSES = (importlib.machinery.ExtensionFileLoader, _SourceFileLoader,
                   importlib.machinery.SourcelessFileLoader)
_PathFinder = importlib.machinery.PathFinder
_FileFinder = importlib.machinery.FileFinder
_ZipImporter = zipimport.zipimporter
_ModuleSpec = importlib.machinery.ModuleSpec
_STANDARD_FINDERS = (importlib.machinery.BuiltinImporter, importlib.machinery.FrozenImporter)
_HERE = os.path.dirname(os.path.abspath(__file__))
"""This checkout's ``impls`` folder: where an editable install of this very project sends it."""
_SCALARS = (str, int, float, bool, type(None), bytes)
_FILE_FINDER_STATE = frozenset(_INSTANCE_DICT(_FileFinder(_HERE, (_SourceFileLoader, [".py"])),
                                              "__dict__"))
"""The attributes a ``FileFinder`` instance has (``path``, ``_loaders``, ``_path_cache``...)."""
_ZIP_STATE = frozenset({"archive", "prefix", "_files"})
_NUMBA_STATE = frozenset({"initialized", "numba_path", "numba_cuda_path"})
_BUILTINS = ("__import__", "type", "len", "all", "any", "getattr", "hasattr", "list", "int",
             "isinstance", "range")
"""``builtins.__import__`` (what an ``import`` statement calls) and the builtins this module
calls while it judges finders."""
_BUILTINS_AT_IMPORT = tuple((name, _MODULE_DICT.__get__(builtins)[name]) for name in _BUILTINS)


def _namespace(owner):
    """A module's globals or a class's dict as the interpreter uses them (read past a rebound
    module ``__class__`` or a metaclass's ``__dict__``, as :mod:`conformance.engine.namespaces`)."""
    return _MODULE_DICT.__get__(owner) if isinstance(owner, _MODULE) else \
        _CLASS_DICT.__get__(owner)


def _module(name: str):
    """``sys.modules[name]`` when it is a plain module, else None."""
    module = sys.modules.get(name)
    return module if type(module) is _MODULE else None


def _finder_class(module_name: str, class_name: str):
    """The class ``class_name`` of module ``module_name`` when an instance of exactly it is on
    ``sys.meta_path`` now (None otherwise)."""
    module = _module(module_name)
    cls = None if module is None else _namespace(module).get(class_name)
    if cls is None or not any(type(finder) is cls for finder in list(sys.meta_path)):
        return None
    return cls


def _this_projects_editable_install():
    """``(module, _EditableFinder, _EditableNamespaceFinder)`` of setuptools' editable finder of
    this checkout when it is on ``sys.meta_path`` (``__editable___planner_conformance_*_finder``,
    whose ``MAPPING`` sends ``impls`` to :data:`_HERE`), else ``(None, None, None)``."""
    for finder in list(sys.meta_path):
        if type(finder) is not type:
            continue
        module = _module(_namespace(finder).get("__module__", ""))
        if module is None or not module.__name__.startswith("__editable___planner_conformance_"):
            continue
        names = _namespace(module)
        mapping = names.get("MAPPING")
        if (names.get("_EditableFinder") is finder and type(mapping) is dict
                and mapping.get("impls") == _HERE):
            return module, finder, names.get("_EditableNamespaceFinder")
    return None, None, None


_REWRITE = _module("_pytest.assertion.rewrite")
_REWRITE_HOOK = None if _REWRITE is None else _namespace(_REWRITE).get("AssertionRewritingHook")
_DISTUTILS = _finder_class("_distutils_hack", "DistutilsMetaFinder")
_NUMBA_REDIRECT = _finder_class("_numba_cuda_redirector", "NumbaCudaFinder")
_EDITABLE_MODULE, _EDITABLE, _EDITABLE_NAMESPACE = _this_projects_editable_install()


def _guarded() -> list:
    """The modules and classes whose namespaces must read as at import for a finder to count
    (:func:`intact`): the import system's own modules (``importlib._bootstrap``,
    ``_bootstrap_external`` and the built-in modules they call: ``posix``, ``_io``, ``marshal``,
    ``_imp``...; ``zipimport``), every class they define, and the known finders' classes (their
    bases too) and modules; with this checkout's editable finder, ``pathlib``, ``os``,
    ``os.path`` and ``importlib.machinery`` it calls."""
    modules = [_bootstrap, _bootstrap_external, zipimport]
    for module in (_bootstrap, _bootstrap_external):
        modules += [v for v in _namespace(module).values()
                    if type(v) is _MODULE and v is not sys and v not in modules]
    if _REWRITE is not None:
        modules.append(_REWRITE)
    if _EDITABLE_MODULE is not None:
        modules += [_EDITABLE_MODULE, pathlib, os, os.path, importlib.machinery]
    owners = list(modules)
    for module in modules:
        owners += [v for v in list(_namespace(module).values()) if isinstance(v, type)
                   and _namespace(v).get("__module__") == module.__name__ and v not in owners]
    for cls in (_REWRITE_HOOK, _DISTUTILS, _NUMBA_REDIRECT, _EDITABLE, _EDITABLE_NAMESPACE):
        if isinstance(cls, type):
            owners += [c for c in cls.__mro__ if c is not object and c not in owners]
    return owners


_CHANGING = frozenset({"_epoch"})
"""Class attributes the import system changes itself (``_NamespacePath._epoch``, by
``importlib.invalidate_caches``)."""
_SNAPSHOT = tuple((owner, type(owner), dict(_namespace(owner))) for owner in _guarded())


def intact() -> bool:
    """Whether the import system reads as when this module was imported: every namespace of
    :func:`_guarded` holds the same keys (each an exact ``str``) bound to the same objects, and
    ``builtins.__import__`` (and the builtins this module calls) are the ones of then."""
    names = _namespace(builtins)
    if any(names.get(name) is not value for name, value in _BUILTINS_AT_IMPORT):
        return False
    for owner, kind, before in _SNAPSHOT:
        if type(owner) is not kind:
            return False
        now = _namespace(owner)
        if len(now) != len(before) or not all(type(key) is str for key in now):
            return False
        if any(now.get(key, intact) is not value for key, value in before.items()
               if key not in _CHANGING):
            return False
    return True


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
    kind = type(finder)
    if _DISTUTILS is not None and kind is _DISTUTILS:
        # Its answer is its method spec_for_<name>: none of the instance's own may stand there.
        state = _INSTANCE_DICT(finder, "__dict__")
        if type(state) is not dict or not all(type(key) is str and key.startswith("spec_for_")
                                              and key != "spec_for_" + name for key in state):
            raise Refused
        return finder.find_spec(name, search)
    if _NUMBA_REDIRECT is not None and kind is _NUMBA_REDIRECT:
        if "numba.cuda" in name or not _plain_state(finder, _NUMBA_STATE):
            raise Refused  # for numba.cuda it asks every finder itself, with other paths
        return finder.find_spec(name, search)
    if _EDITABLE is not None and finder is _EDITABLE:
        names = _namespace(_EDITABLE_MODULE)
        mapping = names["MAPPING"]
        if not (_plain(mapping) and _plain(names["NAMESPACES"])):
            raise Refused
        parent = name.rpartition(".")[0]
        if name not in mapping and parent in mapping:  # it asks the path finder: asked here
            return _path_search(name, [mapping[parent]])
        return finder.find_spec(name, search)
    raise Refused


def _path_search(name: str, search):
    """The standard path finder's answer for ``name`` (``PathFinder.find_spec``: ``search``, or
    ``sys.path`` at the top level, entry by entry through ``sys.path_importer_cache``), each
    path-entry finder asked here only when it is known (:func:`_known_entry_finder`). An entry
    the cache does not hold yet gets its finder from ``sys.path_hooks`` as in the import (the
    path finder's own ``_path_importer_cache``, which caches it for the import too), judged
    then like any other. Raises :class:`Refused`."""
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


def _known_entry_finder(finder) -> bool:
    """Whether path-entry finder ``finder`` is one whose answer this module can take: a
    ``FileFinder`` or a ``zipimporter`` of exactly that type whose state is plain data (a ``set``
    subclass cache could hide a file from one caller), or this checkout's editable install's
    namespace finder."""
    kind = type(finder)
    if kind is _FileFinder:
        return _plain_state(finder, _FILE_FINDER_STATE, _LOADER_CLASSES)
    if kind is _ZipImporter:
        return _plain_state(finder, _ZIP_STATE)
    if _EDITABLE_NAMESPACE is not None and finder is _EDITABLE_NAMESPACE:
        names = _namespace(_EDITABLE_MODULE)
        return _plain(names["NAMESPACES"]) and _plain(names["MAPPING"])
    return False


def _plain_state(obj, names: frozenset, classes: tuple = ()) -> bool:
    """Whether ``obj``'s instance dict is an exact dict whose keys are among ``names`` and whose
    values are plain data (:func:`_plain`, ``classes`` allowed as values too)."""
    state = _INSTANCE_DICT(obj, "__dict__")
    return type(state) is dict and all(type(key) is str and key in names
                                       and _plain(value, classes) for key, value in state.items())


def _plain(value, classes: tuple = (), depth: int = 3) -> bool:
    """Whether ``value`` is data no method of which is the value's own: a str, int, float,
    bool, None or bytes, one of ``classes`` itself, or an exact tuple, list, set, frozenset or
    dict of such (nested ``depth`` deep)."""
    kind = type(value)
    if any(kind is scalar for scalar in _SCALARS) or any(value is c for c in classes):
        return True
    if depth and (kind is tuple or kind is list or kind is set or kind is frozenset):
        return all(_plain(item, classes, depth - 1) for item in value)
    if depth and kind is dict:
        return all(_plain(k, classes, depth - 1) and _plain(v, classes, depth - 1)
                   for k, v in value.items())
    return False
