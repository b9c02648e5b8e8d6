"""virtualenv's distutils patch finder, as :mod:`impls.known_finders` knows it (through
:func:`impls.editable_finders.route` and :func:`impls.editable_finders.guarded`).

``_virtualenv._Finder``: put first on ``sys.meta_path`` by the ``_virtualenv.pth`` of an
environment the ``virtualenv`` tool made (``src/virtualenv/create/via_global_ref/_virtualenv.py``,
whose latest releases put it there only below Python 3.10). It is never asked: its
``find_spec``, the code compiled from its module's file, opens with ``if fullname in
_DISTUTILS_PATCH and self.fullname is None:`` and returns None after it
(:data:`_VIRTUALENV_GUARDS`), so it answers None for any other name (:func:`silent`); a name of
``_DISTUTILS_PATCH`` (``distutils.dist``, ``setuptools.dist``), whose loader it patches, is
refused.

It is judged when this module is imported (before any planner code runs in the harness's
process; :func:`_virtualenv_finder`): an instance of exactly the class ``_Finder`` of the plain
module ``_virtualenv`` on ``sys.meta_path`` then, of the bases ``(object,)``, with no attribute
its class statement does not name, its ``find_spec`` the code compiled from the module's file
(read then) and of a known guard, ``_DISTUTILS_PATCH`` an exact tuple of exact str. Then, at
each lookup, the instance's own state must be plain data (``fullname`` only). The module and
the class are snapshot with the import system's (:func:`guarded`, ``import_snapshot._guarded``: a
rebinding after that refuses every lookup).
"""

from __future__ import annotations

import sys
import types

from impls.finder_data import (code_objects, find_spec_def, finder_class, namespace,
                               plain_state, read_text, shape)

_FUNCTION = types.FunctionType
_GUARD = "    if fullname in {} and self.fullname is None:\n        ...\n    return None\n"
_VIRTUALENV_GUARDS = (
    "def find_spec(self, fullname, path, target=None):\n" + _GUARD.format("_DISTUTILS_PATCH"),
    # later releases: read into a local first, None while the file is half rewritten
    "def find_spec(self, fullname, path, target=None):\n    try:\n        distutils_patch = "
    "_DISTUTILS_PATCH\n    except NameError:\n        return None\n"
    + _GUARD.format("distutils_patch"),
)
"""The shapes of ``_Finder.find_spec`` in virtualenv's ``_virtualenv.py``, its annotations,
docstring and the body of its ``if`` (what it does for a patched name) left out."""
_CLASS_ATTRS = frozenset({"__module__", "__doc__", "__dict__", "__weakref__", "__firstlineno__",
                          "__static_attributes__"})
_STATE = frozenset({"fullname"})


def _virtualenv_finder():
    """``(module, _Finder)`` of virtualenv's ``_virtualenv`` when an instance of exactly that
    class is on ``sys.meta_path`` now and its code is known, else ``(None, None)``: the class of
    the bases ``(object,)``, with no attribute its class statement does not name, its
    ``find_spec`` the code compiled from the module's file (read now) and of a known guard
    (:data:`_VIRTUALENV_GUARDS`), ``_DISTUTILS_PATCH`` an exact tuple of exact str."""
    cls = finder_class("_virtualenv", "_Finder")
    names = {} if cls is None else namespace(sys.modules["_virtualenv"])
    own = {} if cls is None else namespace(cls)
    patch, filename, method = (names.get("_DISTUTILS_PATCH"), names.get("__file__"),
                               own.get("find_spec"))
    if type(cls) is not type or cls.__bases__ != (object,) or type(patch) is not tuple \
            or not all(type(item) is str for item in (*patch, *own, filename)) \
            or type(method) is not _FUNCTION or method.__globals__ is not names \
            or method.__closure__ is not None:
        return None, None
    text = read_text(filename)
    try:
        codes = {code.co_qualname: code for code in
                 code_objects(compile(text, filename, "exec", dont_inherit=True), [])}
    except (SyntaxError, ValueError, TypeError):
        return None, None
    body = codes.get("_Finder")  # the class statement's code: the names it binds among co_names
    definition = find_spec_def(text, "_Finder")
    if body is None or definition is None or definition.decorator_list \
            or method.__code__ != codes.get("_Finder.find_spec") \
            or not set(own) <= set(body.co_names) | _CLASS_ATTRS \
            or shape(definition, blank_ifs=True) not in {
                shape(find_spec_def(guard), blank_ifs=True) for guard in _VIRTUALENV_GUARDS}:
        return None, None
    return sys.modules["_virtualenv"], cls


# --- the finder known, judged now (before any planner code runs here) -----------------------

_VIRTUALENV_MODULE, _VIRTUALENV = _virtualenv_finder()
_VIRTUALENV_PATCH = None if _VIRTUALENV is None else \
    namespace(_VIRTUALENV_MODULE)["_DISTUTILS_PATCH"]


def guarded() -> tuple[list, list]:
    """``([module], [class])`` whose namespaces must read as now for virtualenv's finder to
    count: ``_virtualenv`` and its ``_Finder`` (``([], [])`` when it is not known)."""
    if _VIRTUALENV is None:
        return [], []
    return [_VIRTUALENV_MODULE], [_VIRTUALENV]


def is_finder(finder) -> bool:
    """Whether meta path finder ``finder`` is an instance of exactly the known ``_Finder``."""
    return _VIRTUALENV is not None and type(finder) is _VIRTUALENV


def silent(finder, name: str) -> bool:
    """Whether virtualenv's finder ``finder`` (:func:`is_finder`) answers None for ``name``
    without being asked: ``name`` is not one it patches and its own state is plain data
    (False: refuse the lookup; for a patched name it asks ``importlib.util.find_spec``
    itself)."""
    return name not in _VIRTUALENV_PATCH and plain_state(finder, _STATE)
