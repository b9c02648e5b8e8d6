"""What a call may not change in the judge's own process: the namespaces of the modules that
decide a verdict and of the classes they define, snapshotted before a call and set back after it
(:func:`snapshot`, :func:`restore_changed`), read through the interpreter's own descriptors so that
a rebound module ``__class__`` or a metaclass cannot show the judge another namespace; and the
contents of every dict, list, set and bytearray those namespaces hold (through dicts, lists,
sets and tuples): a binding that stays the same object proves nothing of what it holds
(``PROFILES["all"]`` narrowed in place, tests/test_hostile17.py).

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
_CONTENTS = object()
"""The key under which :func:`snapshot` keeps the contents of every container (:func:`_held`)."""
_MUTABLE = (dict, list, set, bytearray)
"""The containers whose contents a snapshot keeps (exact types: a subclass is the planner's)."""
_WALKED = (dict, list, set, tuple, frozenset)
"""The containers a snapshot looks into for more of them."""
_MOST = 100_000
"""The most elements a snapshot walks (the watched namespaces hold a few hundred)."""


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
    saved[_CONTENTS] = _held(saved)
    return saved


def _held(saved: dict) -> list[tuple]:
    """(owner, path, container, a copy of its contents) of every container of :data:`_MUTABLE`
    the namespaces of ``saved`` hold, walked through :data:`_WALKED` (each container once; a
    module's ``__builtins__`` left out)."""
    out, seen, budget = [], set(), [_MOST]

    def walk(owner, path: str, value) -> None:
        if type(value) not in _WALKED or id(value) in seen or budget[0] <= 0:
            return
        seen.add(id(value))
        items = list(value.items()) if type(value) is dict else list(value)
        budget[0] -= len(items) + 1
        if type(value) in _MUTABLE:
            out.append((owner, path, value, tuple(items)))
        for item in items:
            for part in (item if type(value) is dict else (item,)):
                walk(owner, f"{path}[...]", part)

    for owner, entry in saved.items():
        if owner is _FUNCTIONS:
            continue
        for key, value in entry[1].items():
            if not (type(key) is str and key == "__builtins__"):
                walk(owner, key if type(key) is str else f"<a {type_name(key)} key>", value)
    return out


def _same_contents(container, then: tuple) -> bool:
    """Whether ``container`` holds the very objects of ``then`` (:func:`_held`'s copy)."""
    if type(container) is bytearray:
        return bytes(container) == bytes(then)
    now = list(container.items()) if type(container) is dict else list(container)
    if len(now) != len(then):
        return False
    if type(container) is set:
        return {id(x) for x in now} == {id(x) for x in then}
    if type(container) is dict:
        return all(a[0] is b[0] and a[1] is b[1] for a, b in zip(now, then))
    return all(a is b for a, b in zip(now, then))


def _put_back(container, then: tuple) -> None:
    kind = type(container)
    if kind is dict:
        dict.clear(container)
        dict.update(container, then)
    elif kind is set:
        set.clear(container)
        set.update(container, then)
    else:
        kind.__setitem__(container, slice(None), kind(then))


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
    defaults or closure the call replaced in place is set back and recorded too, and so is a
    container whose contents it changed in place (``verdict.PROFILES``, a subject's table
    defaults)."""
    found = []
    for owner, entry in saved.items():
        if owner is _FUNCTIONS or owner is _CONTENTS:
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
    for owner, path, container, then in saved[_CONTENTS]:
        if not _same_contents(container, then):
            _put_back(container, then)
            found.append((owner, f"{path} (its contents)"))
    for owner, key in found:
        where = owner.__name__ if isinstance(owner, ModuleType) else \
            f"{owner.__module__}.{owner.__qualname__}"
        data.add(Difference(0, run, "input", f"{where}.{key}", None,
                            "the harness's own", "rebound by the call", "contract"))
