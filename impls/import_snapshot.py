"""The import system as it read when :mod:`impls.known_finders` was imported (before any planner
code runs in the harness's process), and whether it still reads so: :func:`intact`, which
:mod:`impls.known_finders` requires before it takes any finder's answer (else the source lookup
is refused: no digest rather than a false one), and :func:`changes`, what differs, in words.

Snapshot when this module is imported (:mod:`impls.known_finders` imports it first): every
namespace of :func:`_guarded` (the import system's own modules and classes, pytest's
assertion-rewriting module when loaded then, the known ``.pth`` finders' modules and classes:
:func:`impls.editable_finders.guarded`) as its keys and the objects bound to them, and
``builtins.__import__`` with the builtins that :mod:`impls.known_finders` and this module call
(:data:`_BUILTINS`). A namespace that holds a key of another type than ``str`` (which can hash and
compare as it likes) reads as changed. Not covered: this module's own names, which code run later
in the process can rebind (as :mod:`impls.known_finders` says of its own).
"""

from __future__ import annotations

import builtins
import importlib._bootstrap as _bootstrap
import importlib._bootstrap_external as _bootstrap_external
import sys
import types
import zipimport

from impls import editable_finders as _pth
from impls.finder_data import namespace as _namespace

_MODULE_DICT = types.ModuleType.__dict__["__dict__"]
_MODULE = types.ModuleType
_BUILTINS = ("__import__", "type", "len", "all", "any", "getattr", "hasattr", "list", "int",
             "isinstance", "range")
"""``builtins.__import__`` (what an ``import`` statement calls) and the builtins
:mod:`impls.known_finders` and this module call while they judge finders."""
_BUILTINS_AT_IMPORT = tuple((name, _MODULE_DICT.__get__(builtins)[name]) for name in _BUILTINS)


def _module(name: str):
    """``sys.modules[name]`` when it is a plain module, else None."""
    module = sys.modules.get(name)
    return module if type(module) is _MODULE else None


_REWRITE = _module("_pytest.assertion.rewrite")
_REWRITE_HOOK = None if _REWRITE is None else _namespace(_REWRITE).get("AssertionRewritingHook")


def _guarded() -> list:
    """The modules and classes whose namespaces must read as at import for a finder to count
    (:func:`intact`): the import system's own modules (``importlib._bootstrap``,
    ``_bootstrap_external`` and the built-in modules they call: ``posix``, ``_io``, ``marshal``,
    ``_imp``...; ``zipimport``), every class they define, and the known finders' classes (their
    bases too) and modules (with the ones the ``.pth`` files' finders call:
    :func:`impls.editable_finders.guarded`)."""
    pth_modules, pth_classes = _pth.guarded()
    modules = [_bootstrap, _bootstrap_external, zipimport]
    for module in (_bootstrap, _bootstrap_external):
        modules += [v for v in _namespace(module).values()
                    if type(v) is _MODULE and v is not sys and v not in modules]
    if _REWRITE is not None:
        modules.append(_REWRITE)
    modules += [module for module in pth_modules if module not in modules]
    owners = list(modules)
    for module in modules:
        owners += [v for v in list(_namespace(module).values()) if isinstance(v, type)
                   and _namespace(v).get("__module__") == module.__name__ and v not in owners]
    for cls in (_REWRITE_HOOK, *pth_classes):
        if isinstance(cls, type):
            owners += [c for c in cls.__mro__ if c is not object and c not in owners]
    return owners


_CHANGING = frozenset({"_epoch"})
"""Class attributes the import system changes itself (``_NamespacePath._epoch``, by
``importlib.invalidate_caches``)."""
_WARNINGS = "__warningregistry__"
"""The key the ``warnings`` machinery adds to the globals of a module a warning is attributed to
(a ``ResourceWarning`` of an unclosed file collected during an import lands in
``importlib._bootstrap_external``): nothing of the import system reads it. Neither compared nor
counted."""


def _ours(key) -> bool:
    """Whether ``key`` is one :func:`intact` compares (every key but :data:`_WARNINGS`; a key of
    another type than ``str`` always is)."""
    return not (type(key) is str and key == _WARNINGS)
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
        keys = [key for key in now if _ours(key)]
        if len(keys) != sum(map(_ours, before)) or not all(type(key) is str for key in keys):
            return False
        if any(now.get(key, intact) is not value for key, value in before.items()
               if key not in _CHANGING and _ours(key)):
            return False
    return True


def changes() -> list[str]:
    """What :func:`intact` finds changed, in words (empty when it is intact): each builtin rebound,
    and per guarded namespace the keys added, removed or rebound. For messages and diagnosis."""
    names = _namespace(builtins)
    out = [f"builtins.{name} rebound" for name, value in _BUILTINS_AT_IMPORT
           if names.get(name) is not value]
    for owner, kind, before in _SNAPSHOT:
        label = getattr(owner, "__name__", type(owner).__name__)
        if type(owner) is not kind:
            out.append(f"{label}: now of type {type(owner).__name__}")
            continue
        now = _namespace(owner)
        added = sorted(repr(key) for key in now
                       if _ours(key) and (type(key) is not str or key not in before))
        removed = sorted(repr(key) for key in before if _ours(key) and key not in now)
        rebound = sorted(key for key, value in before.items() if _ours(key)
                         and key in now and now[key] is not value and key not in _CHANGING)
        out += [f"{label}: {what} {', '.join(keys)}" for what, keys in
                (("added", added), ("removed", removed), ("rebound", rebound)) if keys]
    return out
