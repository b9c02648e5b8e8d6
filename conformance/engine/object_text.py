"""A planner's object as text for a one-call verdict (:mod:`conformance.engine.one_call`): what
it raised, returned, or gave as an ``error_id``. Only a plain ``str`` is trusted as text: a
subclass of ``str`` (which can compare equal to anything), a ``__str__`` or ``__repr__`` that
raises, and a metaclass that lies about the class's name each read as a placeholder that names
the class as it was defined. None of these functions raises for an ``Exception`` the object's
methods raise.
"""

from __future__ import annotations

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
