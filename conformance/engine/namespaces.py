"""What a call may not change in the judge's own process: the namespaces of the modules that
decide a verdict and of the classes they define, snapshotted before a call and set back after it
(:func:`snapshot`, :func:`restore_changed`), read through the interpreter's own descriptors so that
a rebound module ``__class__`` or a metaclass cannot show the judge another namespace.

Used by :mod:`conformance.engine.one_call`, whose planner runs in the judge's process; what it
cannot stop (a call that patches torch itself, say) is listed there.
"""

from __future__ import annotations

from types import MappingProxyType, ModuleType

from conformance.engine.verdict import Difference, VerdictData

_MODULE_DICT = ModuleType.__dict__["__dict__"]
_CLASS_DICT = type.__dict__["__dict__"]
_CLASS_NAME = type.__dict__["__name__"]


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
    every class one of them defines, right before a call (:func:`restore_changed`)."""
    saved = {}
    for module in modules:
        names = _attributes(module)
        saved[module] = (type(module), dict(names))
        for value in list(names.values()):
            if isinstance(value, type) and _attributes(value).get("__module__") == module.__name__:
                saved.setdefault(value, (type(value), dict(_attributes(value))))
    return saved


def restore_changed(data: VerdictData, run: str, saved: dict) -> None:
    """A call that rebound an attribute of a watched module (the judge, the verdict, the
    allocations, the subject) or of a class one of them defines (``VerdictData.add``,
    ``Allocations.judge``), or a module's ``__class__``, is a contract difference; everything is set
    back first (a rebound ``add`` must not swallow the difference), then recorded. A key the call
    put into a module's namespace is never hashed, compared or printed (it is the planner's
    object): a module with one is cleared and set back whole."""
    found = []
    for owner, (kind, before) in saved.items():
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
    for owner, key in found:
        where = owner.__name__ if isinstance(owner, ModuleType) else \
            f"{owner.__module__}.{owner.__qualname__}"
        data.add(Difference(0, run, "input", f"{where}.{key}", None,
                            "the harness's own", "rebound by the call", "contract"))
