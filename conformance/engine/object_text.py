"""A planner's object as text for a verdict (:mod:`conformance.engine.one_call`; and
:func:`error_fields`, what :class:`conformance.engine.observe.Raised` records of a raise for the
corpus engine, in process and in the isolation worker): what it raised, returned, or gave as an
``error_id``. Only a plain ``str`` is trusted as text: a
subclass of ``str`` (which can compare equal to anything), a ``__str__`` or ``__repr__`` that
raises, and a metaclass that lies about the class's name each read as a placeholder that names
the class as it was defined. None of these functions raises for an ``Exception`` the object's
methods raise.
"""

from __future__ import annotations

import builtins

from conformance.engine.namespaces import type_name


def plain_text(value) -> str | None:
    """``str(value)`` when it is a plain ``str`` (not a subclass that compares equal to anything),
    else None; a ``__str__`` that raises gives None too."""
    try:
        text = str(value)
    except Exception:  # noqa: BLE001 - a planner's object: its text is data, or nothing
        return None
    return text if type(text) is str else None


def one_line(value) -> str:
    """The first line of ``value``'s text, at most 300 characters, or a placeholder naming its
    class when the text cannot be read."""
    text = plain_text(value)
    if text is None:
        return f"<{type_name(value)} whose text cannot be read>"
    return (text.splitlines() or [""])[0][:300]


def repr_line(value) -> str:
    """:func:`one_line` of ``repr(value)``, or a placeholder naming its class when ``repr``
    raises."""
    try:
        text = repr(value)
    except Exception:  # noqa: BLE001
        return f"<{type_name(value)} whose repr raises>"
    return one_line(text if type(text) is str else object.__repr__(value))


_MRO = type.__dict__["__mro__"]
_NAME = type.__dict__["__name__"]
_BUILTIN_CLASSES = {name: c for name, c in vars(builtins).items() if isinstance(c, type)}
"""The built-in classes by name, as they were when this module was imported (the observer
imports it before any planner: one that rebinds ``builtins.ValueError`` in its process does not
make its class a built-in here)."""


def error_fields(exc: BaseException) -> tuple[str, list[str], bool, str, str | None]:
    """(class name, built-in bases, is a ValueError, message, error id) of ``exc``, read past
    whatever the planner's objects say of themselves (spec section 4: a documented error is an
    instance of the built-in class with the exact message and id; error_parts compares them):

    * the class's name and its MRO through ``type``'s own descriptors
      (:func:`conformance.engine.namespaces.type_name`), so a metaclass whose ``__name__`` or
      ``__mro__`` property says ``ValueError`` names no built-in base its class lacks;
    * the message and the ``error_id`` only as a plain ``str``
      (:func:`plain_text`): a ``str`` subclass can compare equal to
      every message and id; such a text, and an ``error_id`` that raises when read, is recorded
      as a placeholder naming its class, which matches no case.
    """
    kind = type(exc)
    bases = [_NAME.__get__(c) for c in _MRO.__get__(kind)
             if _BUILTIN_CLASSES.get(_NAME.__get__(c)) is c]
    message = plain_text(exc)
    if message is None:
        message = f"<{type_name(exc)} whose text is not a plain str>"
    try:
        error_id = getattr(exc, "error_id", None)
    except Exception:  # noqa: BLE001 - the planner's property: an id that cannot be read
        error_id = _UnreadableId()
    if error_id is not None:
        text = plain_text(error_id)
        error_id = text if text is not None else f"<{type_name(error_id)} as error_id>"
    return (type_name(exc), bases, issubclass(kind, _BUILTIN_CLASSES["ValueError"]), message,
            error_id)


class _UnreadableId:
    """What an ``error_id`` is recorded as when reading it raised."""

    def __str__(self):
        return "<an error_id that raises when read>"
