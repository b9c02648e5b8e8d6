"""Which meta path finders a ``.pth`` file of an installed package puts on ``sys.meta_path`` at
interpreter start :mod:`impls.known_finders` knows, and how it asks them (:func:`route`).

Each is judged when this module is imported (before any planner code runs in the harness's
process), of the exact class on ``sys.meta_path`` then, in a plain module (read past any
override: :mod:`impls.finder_data`); the modules and classes are snapshot with the import
system's (:func:`guarded`, ``import_snapshot._guarded``: a rebinding after that refuses every
lookup). The finders, and where each rule comes from:

* setuptools' ``_distutils_hack.DistutilsMetaFinder`` (``distutils-precedence.pth``): asked, with
  no ``spec_for_<name>`` of the instance's own (its ``find_spec`` calls that method);
* numba-cuda's ``_numba_cuda_redirector.NumbaCudaFinder`` (``_numba_cuda_redirector.pth``): asked
  with a plain state; refused for a name holding ``numba.cuda`` (it asks every finder itself);
* setuptools' editable finders, one per project installed with ``pip install -e``
  (``__editable__.<dist>-<version>.pth`` runs ``install()`` of the generated module
  ``__editable___<dist>_<version>_finder``: its class ``_EditableFinder`` appended to
  ``sys.meta_path``, the path hook of ``_EditableNamespaceFinder`` for namespace packages): this
  checkout's own (``MAPPING`` sends ``impls`` to this folder), or a module that is exactly what
  ``_finder_template`` of ``setuptools/command/editable_wheel.py`` in the installed setuptools
  writes for its own ``MAPPING``, ``NAMESPACES`` and name (:func:`_setuptools_template`; one
  written by a release whose template differs is not known). Asked while ``MAPPING``
  (``{package: folder}``) and ``NAMESPACES`` (``{package: [folder, ...]}``) are plain data; for a
  name outside ``MAPPING`` whose parent is in it, the template of :data:`_DELEGATING` asks the
  standard path finder in the parent's folder, and that search is repeated by the caller instead
  (an older template looks for the file itself: asked);
* virtualenv's ``_virtualenv._Finder`` (``_virtualenv.pth`` of an environment the ``virtualenv``
  tool made): never asked, None for any name but the ones whose loader it patches
  (``distutils.dist``, ``setuptools.dist``), which are refused. :mod:`impls.virtualenv_finder`
  says from which file of virtualenv that rule comes and what the finder is judged on.
"""

from __future__ import annotations

import builtins
import importlib
import importlib.machinery
import os
import pathlib
import sys
import types

from impls.finder_data import (code_objects, find_spec_def, finder_class, namespace, plain,
                               plain_module, plain_state, read_text, shape)
from impls.virtualenv_finder import guarded as _virtualenv_guarded
from impls.virtualenv_finder import is_finder as _is_virtualenv_finder
from impls.virtualenv_finder import silent as _virtualenv_silent

_MODULE_DICT = types.ModuleType.__dict__["__dict__"]
_CLASS_DICT = type.__dict__["__dict__"]
_INSTANCE_DICT = object.__getattribute__
_FUNCTION = types.FunctionType
_GETSET = types.GetSetDescriptorType
_BUILTIN_NAMES = _MODULE_DICT.__get__(builtins)
_HERE = os.path.dirname(os.path.abspath(__file__))
"""This checkout's ``impls`` folder: where an editable install of this very project sends it."""

ASK, SILENT, REFUSE = "ask", "silent", "refuse"  # what :func:`route` says


# --- setuptools' editable finders ------------------------------------------------------------

def _maps_plain(names) -> bool:
    """Whether an editable finder module's ``MAPPING`` is an exact dict of exact str to exact str
    and its ``NAMESPACES`` an exact dict of exact str to exact lists of exact str."""
    mapping, spaces = names.get("MAPPING"), names.get("NAMESPACES")
    return (type(mapping) is dict and type(spaces) is dict
            and all(type(k) is str and type(v) is str for k, v in mapping.items())
            and all(type(k) is str and type(v) is list and all(type(p) is str for p in v)
                    for k, v in spaces.items()))


_PLACEHOLDER_TAIL = ".__path_hook__"
_NOT_IDENTIFIER = r"\W|^(?=\d)"
"""setuptools names the module after its placeholder ``__editable__.<dist>-<version>.finder``
with this pattern's matches made ``_`` (``safe_identifier``, ``setuptools/_normalization.py``)."""
_MODULE_ATTRS = frozenset({"__name__", "__doc__", "__package__", "__loader__", "__spec__",
                           "__file__", "__cached__", "__builtins__"})


def _setuptools_template(names) -> str | None:
    """The text setuptools' ``_finder_template(name, mapping, namespaces)`` writes for the
    ``MAPPING``, ``NAMESPACES`` and name (``PATH_PLACEHOLDER`` less ``.__path_hook__``; the module
    named after it) of the module of globals ``names``, when that module is it: the text
    compiled under the module's file name and run afresh binds the same names, to functions and
    classes' methods of the same code objects (in the module's globals, no closure, the same
    defaults), classes of the same bases and attributes, equal data and the same imported
    objects. None otherwise, and without setuptools or that function (64 on), or of another
    signature. Importing setuptools appends its ``_vendor`` folder to ``sys.path`` (71 on), as
    any import of it does."""
    placeholder, filename, name = (names.get(key) for key in
                                   ("PATH_PLACEHOLDER", "__file__", "__name__"))
    if not (_maps_plain(names) and type(placeholder) is str and type(filename) is str
            and type(name) is str and placeholder.endswith(_PLACEHOLDER_TAIL)):
        return None
    import re  # here and not above: only an editable finder not of this checkout needs it

    stem = placeholder[:-len(_PLACEHOLDER_TAIL)]
    if re.sub(_NOT_IDENTIFIER, "_", stem) != name:
        return None
    try:
        render = importlib.import_module("setuptools.command.editable_wheel")._finder_template
        code = render.__code__
        if code.co_varnames[:code.co_argcount] != ("name", "mapping", "namespaces"):
            return None
        text = render(stem, names["MAPPING"], names["NAMESPACES"])
        fresh = {"__name__": name, "__builtins__": _BUILTIN_NAMES}
        exec(compile(text, filename, "exec", dont_inherit=True), fresh)  # noqa: S102
    except Exception:  # noqa: BLE001 - no setuptools, another template: not known
        return None
    keys = set(names) - _MODULE_ATTRS
    same = (all(type(key) is str for key in names) and keys == set(fresh) - _MODULE_ATTRS
            and all(_same(names[key], fresh[key], names, fresh) for key in keys))
    return text if same else None


def _same(mine, theirs, names, fresh) -> bool:
    """Whether ``mine`` (bound in the module of globals ``names``) is what ``theirs`` (bound by
    the template run in ``fresh``) is."""
    kind = type(theirs)
    if kind is classmethod or kind is staticmethod:
        return type(mine) is kind and _same(mine.__func__, theirs.__func__, names, fresh)
    if kind is _FUNCTION and theirs.__globals__ is fresh:
        return (type(mine) is kind and mine.__code__ == theirs.__code__
                and mine.__globals__ is names and mine.__builtins__ is _BUILTIN_NAMES
                and mine.__closure__ is None and _same(mine.__defaults__, theirs.__defaults__,
                                                       names, fresh)
                and _same(mine.__kwdefaults__, theirs.__kwdefaults__, names, fresh))
    if kind is type and _CLASS_DICT.__get__(theirs).get("__module__") == fresh["__name__"]:
        if type(mine) is not type:
            return False
        own, their = _CLASS_DICT.__get__(mine), _CLASS_DICT.__get__(theirs)
        return (mine.__qualname__ == theirs.__qualname__
                and len(mine.__bases__) == len(theirs.__bases__)
                and all(a is b for a, b in zip(mine.__bases__, theirs.__bases__))
                and all(type(key) is str for key in own) and set(own) == set(their)
                and all(type(own[key]) is _GETSET and own[key].__objclass__ is mine
                        if type(value) is _GETSET else _same(own[key], value, names, fresh)
                        for key, value in their.items()))  # _GETSET: __dict__, __weakref__
    if plain(theirs):
        return type(mine) is kind and plain(mine) and mine == theirs
    return mine is theirs


def _editable_installs() -> tuple:
    """``((module, _EditableFinder, _EditableNamespaceFinder or None, delegates), ...)``: the
    editable finders on ``sys.meta_path`` now that are known (module docstring), in its order,
    ``delegates`` whether it asks the path finder for a child of a package of ``MAPPING``
    (:func:`_delegates`). setuptools is imported only for one that is not this checkout's."""
    found = []
    for finder in list(sys.meta_path):
        name = _CLASS_DICT.__get__(finder).get("__module__") if type(finder) is type else None
        module = plain_module(name) if type(name) is str and name.startswith("__editable___") \
            and name.endswith("_finder") else None
        names = {} if module is None else namespace(module)
        if names.get("_EditableFinder") is not finder or \
                any(finder is known for _, known, _, _ in found):
            continue
        mapping = names.get("MAPPING")
        ours = (name.startswith("__editable___planner_conformance_") and type(mapping) is dict
                and mapping.get("impls") == _HERE)
        text = read_text(names.get("__file__")) if ours else _setuptools_template(names)
        delegates = None if text is None else _delegates(finder, text)
        if delegates is not None:
            found.append((module, finder, names.get("_EditableNamespaceFinder"), delegates))
    return tuple(found)


_DELEGATING = (
    "def find_spec(cls, fullname, path=None, target=None):\n"
    "    if fullname in MAPPING:\n"
    "        pkg_path = MAPPING[fullname]\n"
    "        return cls._find_spec(fullname, Path(pkg_path))\n"
    "    parent, _, child = fullname.rpartition('.')\n"
    "    if parent and parent in MAPPING:\n"
    "        return PathFinder.find_spec(fullname, path=[MAPPING[parent]])\n"
    "    return None\n")
"""The shape of ``_EditableFinder.find_spec`` in setuptools' template that asks the path finder
for a child of a package of ``MAPPING`` (``setuptools/command/editable_wheel.py``; 84 has it)."""


def _delegates(finder, text: str):
    """For editable finder class ``finder`` of module text ``text``: False when none of its
    methods names ``PathFinder`` (it looks for a file itself: asked), True when only its
    ``find_spec`` does and has the shape :data:`_DELEGATING` (whose path-finder search the
    caller repeats), None otherwise (not known)."""
    functions = [value.__func__ if type(value) in (classmethod, staticmethod) else value
                 for value in _CLASS_DICT.__get__(finder).values()]
    functions = [value for value in functions if type(value) is _FUNCTION]
    asking = [code for function in functions
              for code in code_objects(function.__code__, [function.__code__])
              if "PathFinder" in code.co_names]
    if not asking:
        return False
    method = find_spec_def(text, "_EditableFinder")
    if method is None or [code.co_name for code in asking] != ["find_spec"] \
            or shape(method) != shape(find_spec_def(_DELEGATING)):
        return None
    return True


# --- the finders known, judged now (before any planner code runs here) ----------------------

_DISTUTILS = finder_class("_distutils_hack", "DistutilsMetaFinder")
_NUMBA_REDIRECT = finder_class("_numba_cuda_redirector", "NumbaCudaFinder")
_NUMBA_STATE = frozenset({"initialized", "numba_path", "numba_cuda_path"})
_EDITABLE = _editable_installs()


def guarded() -> tuple[list, list]:
    """``(modules, classes)`` whose namespaces must read as now for these finders to count:
    the editable finders' modules (with ``pathlib``, ``os``, ``os.path`` and
    ``importlib.machinery`` they call) and virtualenv's, and the known finders' classes
    (virtualenv's: :func:`impls.virtualenv_finder.guarded`)."""
    virtualenv_modules, virtualenv_classes = _virtualenv_guarded()
    modules = [module for module, _, _, _ in _EDITABLE]
    if _EDITABLE:
        modules += [pathlib, os, os.path, importlib.machinery]
    modules += virtualenv_modules
    classes = [cls for _, finder, spaces, _ in _EDITABLE for cls in (finder, spaces)
               if isinstance(cls, type)]
    classes += [cls for cls in (_DISTUTILS, _NUMBA_REDIRECT) if cls is not None]
    return modules, classes + virtualenv_classes


def route(finder, name: str):
    """How meta path finder ``finder`` answers for ``name``: :data:`ASK` (ask it),
    :data:`SILENT` (None, not asked), a list of folders (it asks the standard path finder there:
    repeat that search), :data:`REFUSE` (a known finder whose answer is not known: refuse the
    lookup), or None (not one of this module's finders)."""
    kind = type(finder)
    if _DISTUTILS is not None and kind is _DISTUTILS:
        # Its answer is its method spec_for_<name>: none of the instance's own may stand there.
        state = _INSTANCE_DICT(finder, "__dict__")
        if type(state) is not dict or not all(type(key) is str and key.startswith("spec_for_")
                                              and key != "spec_for_" + name for key in state):
            return REFUSE
        return ASK
    if _NUMBA_REDIRECT is not None and kind is _NUMBA_REDIRECT:
        if "numba.cuda" in name or not plain_state(finder, _NUMBA_STATE):
            return REFUSE  # for numba.cuda it asks every finder itself, with other paths
        return ASK
    if _is_virtualenv_finder(finder):
        return SILENT if _virtualenv_silent(finder, name) else REFUSE
    for module, known, _, delegates in _EDITABLE:
        if finder is known:
            names = namespace(module)
            if not _maps_plain(names):
                return REFUSE
            mapping = names["MAPPING"]
            parent = name.rpartition(".")[0]
            if delegates and name not in mapping and parent and parent in mapping:
                return [mapping[parent]]
            return ASK
    return None


def known_entry_finder(finder) -> bool:
    """Whether path-entry finder ``finder`` is the ``_EditableNamespaceFinder`` of a known
    editable finder's module whose ``MAPPING`` and ``NAMESPACES`` are plain data."""
    return any(spaces is not None and finder is spaces and _maps_plain(namespace(module))
               for module, _, spaces, _ in _EDITABLE)
