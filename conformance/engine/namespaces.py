"""What a call may not change in the judge's own process: the namespaces of the modules that
decide a verdict and of the classes they define, snapshotted before a call and set back after it
(:func:`snapshot`, :func:`restore_changed`), read through the interpreter's own descriptors so that
a rebound module ``__class__`` or a metaclass cannot show the judge another namespace.

Used by :mod:`conformance.engine.one_call`, whose planner runs in the judge's process; what it
cannot stop (a call that patches torch itself, say) is listed there.
"""

from __future__ import annotations

from types import FunctionType, MappingProxyType, ModuleType

from conformance.engine.verdict import Difference, VerdictData

_MODULE_DICT = ModuleType.__dict__["__dict__"]
_CLASS_DICT = type.__dict__["__dict__"]
_CLASS_NAME = type.__dict__["__name__"]
_FUNCTIONS = object()
"""The key under which :func:`snapshot` keeps what each watched function runs."""
_EMPTY = object()
"""An empty closure cell's contents, in a snapshot."""


def _attributes(owner) -> dict | MappingProxyType:
    """The namespace of a module or class as the interpreter uses it (its globals, its class
    dict), read past whatever a subclass of ModuleType (a module's ``__class__`` can be rebound)
    or a metaclass says its ``__dict__`` is."""
    return _MODULE_DICT.__get__(owner) if isinstance(owner, ModuleType) else \
        _CLASS_DICT.__get__(owner)


def type_name(value) -> str:
    """The name of ``value``'s class, as the class was defined (not what a metaclass's
    ``__name__`` property says or raises)."""
    return _CLASS_NAME.__get__(type(value))


def snapshot(modules: list[ModuleType]) -> dict:
    """{module or class: (its type, a copy of its namespace)} of every module of ``modules`` and
    every class one of them defines, right before a call (:func:`restore_changed`); and what
    every plain function they bind runs (:func:`_runs`)."""
    saved, functions = {}, {}
    for module in modules:
        names = _attributes(module)
        saved[module] = (type(module), dict(names))
        for value in list(names.values()):
            if isinstance(value, type) and _attributes(value).get("__module__") == module.__name__:
                saved.setdefault(value, (type(value), dict(_attributes(value))))
    for owner, (_, names) in saved.items():
        for key, value in names.items():
            function = _function_of(value)
            if function is not None and function not in functions:
                functions[function] = (owner, key, _runs(function))
    saved[_FUNCTIONS] = functions
    return saved


def _function_of(value) -> FunctionType | None:
    """The plain Python function a namespace's value runs when called or read: itself, the one a
    ``staticmethod`` or ``classmethod`` wraps, a ``property``'s getter; else None."""
    if type(value) in (staticmethod, classmethod):
        value = value.__func__
    elif type(value) is property:
        value = value.fget
    return value if type(value) is FunctionType else None


def _cell(cell) -> object:
    try:
        return cell.cell_contents
    except ValueError:  # an empty cell
        return _EMPTY


def _runs(function: FunctionType) -> tuple:
    """What ``function`` runs, beyond its binding: its code, its defaults (and a copy of its
    keyword-only defaults) and its closure cells' contents. A call that sets a watched function's
    ``__code__`` (or its defaults, or a cell) changes what the engine does while every namespace
    still binds the same object, so the binding alone proves nothing (tests/test_hostile15.py)."""
    kw = function.__kwdefaults__
    return (function.__code__, function.__defaults__, kw, None if kw is None else dict(kw),
            tuple(_cell(c) for c in function.__closure__ or ()))


def _same(a: tuple, b: tuple) -> bool:
    """Whether two :func:`_runs` values hold the very same objects."""
    if any(x is not y for x, y in zip(a[:3], b[:3])) or len(a[4]) != len(b[4]):
        return False
    if a[3] is not None and (a[3].keys() != b[3].keys() or
                             any(a[3][k] is not b[3][k] for k in a[3])):
        return False
    return all(x is y for x, y in zip(a[4], b[4]))


def _set_back(function: FunctionType, runs: tuple) -> None:
    function.__code__, function.__defaults__, function.__kwdefaults__ = runs[:3]
    if runs[2] is not None:
        runs[2].clear()
        runs[2].update(runs[3])
    for cell, value in zip(function.__closure__ or (), runs[4]):
        if value is _EMPTY:
            del cell.cell_contents
        else:
            cell.cell_contents = value


def restore_changed(data: VerdictData, run: str, saved: dict) -> None:
    """A call that rebound an attribute of a watched module (the judge, the verdict, the
    allocations, the subject) or of a class one of them defines (``VerdictData.add``,
    ``Allocations.judge``), or a module's ``__class__``, is a contract difference; everything is set
    back first (a rebound ``add`` must not swallow the difference), then recorded. A key the call
    put into a module's namespace is never hashed, compared or printed (it is the planner's
    object): a module with one is cleared and set back whole. A watched function whose code,
    defaults or closure the call replaced in place is set back and recorded too."""
    found = []
    for owner, entry in saved.items():
        if owner is _FUNCTIONS:
            continue
        kind, before = entry
        if type(owner) is not kind:  # a module's __class__ rebound (a __dict__ that lies)
            object.__setattr__(owner, "__class__", kind)
            found.append((owner, "__class__"))
        now = _attributes(owner)
        items = list(now.items())
        present = {k for k, _ in items if type(k) is str}
        changed = [k for k, v in items
                   if type(k) is not str or k not in before or v is not before[k]]
        changed += [k for k in before if k not in present]
        if not changed:
            continue
        if isinstance(owner, ModuleType):
            now.clear()
            now.update(before)
        else:
            for key in (k for k in changed if type(k) is str):
                if key in before:
                    type.__setattr__(owner, key, before[key])
                else:
                    type.__delattr__(owner, key)
        found += [(owner, k if type(k) is str else f"<a {type_name(k)} key>") for k in changed]
    for function, (owner, key, runs) in saved[_FUNCTIONS].items():
        if not _same(_runs(function), runs):
            _set_back(function, runs)
            found.append((owner, f"{key} (its code, defaults or closure)"))
    for owner, key in found:
        where = owner.__name__ if isinstance(owner, ModuleType) else \
            f"{owner.__module__}.{owner.__qualname__}"
        data.add(Difference(0, run, "input", f"{where}.{key}", None,
                            "the harness's own", "rebound by the call", "contract"))
