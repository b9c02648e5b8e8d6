"""A one-call case's documented error against what its launcher call raised
(:mod:`conformance.engine.one_call`).

The call conforms when it raised an instance of the built-in class that the subject's error class
derives from (``ValueError`` for a ``PlanError``) with the case's exact text, and the
``error_id`` it carries, if any, is the case's. A return where the case expects an error is a
``no-error`` difference where the contract decides, an ``error`` one where only a project rule
raises; any other raise is an ``error`` difference whose ``got_kind`` says what it was
(:func:`conformance.engine.verdict.error_kind`). The planner's exception is read as data
(:mod:`conformance.engine.object_text`): its text, its class's name and its ``error_id`` can
neither raise into the judge nor compare equal to what they are not.
"""

from __future__ import annotations

from conformance.engine.namespaces import type_name
from conformance.engine.object_text import one_line, plain_text
from conformance.engine.verdict import Difference, VerdictData, error_kind


class _Unreadable:
    """What an error's ``error_id`` is when reading it raised."""

    def __str__(self):
        return "<an error_id that raises when read>"


_UNREADABLE = _Unreadable()


def judge_error(data: VerdictData, error: tuple[str, str], rule: str, error_class: type, run: str,
                raised) -> bool:
    """Record a difference unless ``raised`` is exactly the documented error ``error``; whether it
    was."""
    error_id, message = error
    want = f"{error_class.__name__} {error_id}: {message}"
    if raised is None:  # where only a project rule raises, returning differs from that rule
        what = "no-error" if rule == "contract" else "error"
        data.add(Difference(0, run, what, "error", None, want, "returned (no error)", rule,
                            got_kind="no error" if what == "error" else None))
        return False
    base = next(c for c in error_class.__mro__ if c.__module__ == "builtins")
    text = plain_text(raised)
    exact = issubclass(type(raised), base) and text is not None and str.__eq__(text, message)
    try:
        raised_id = getattr(raised, "error_id", None)
    except Exception:  # noqa: BLE001 - the planner's property: an id that cannot be read
        raised_id = _UNREADABLE
    ok = exact and (raised_id is None or (type(raised_id) is str and raised_id == error_id))
    if not ok:
        got = f"{type_name(raised)} {one_line(raised_id)}: {one_line(raised)}"
        kind = one_line(raised_id)[:80] if type(raised_id) is str else None
        fake = not issubclass(type(raised), base) and type_name(raised) == base.__name__
        other_message = not (text is not None and str.__eq__(text, message))
        data.add(Difference(0, run, "error", "error", None, want, got, rule,
                            got_kind=error_kind(type_name(raised), fake, kind,
                                                other_message and kind == error_id)))
    return ok
