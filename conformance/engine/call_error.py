"""A one-call case's documented error against what its launcher call raised
(:mod:`conformance.engine.one_call`).

The call conforms when it raised an instance of the built-in class that the subject's error class
derives from (``ValueError`` for a ``PlanError``) with the case's exact text, and the
``error_id`` it carries, if any, is the case's. A return where the case expects an error is a
``no-error`` difference where the contract decides, an ``error`` one where only a project rule
raises; any other raise is an ``error`` difference whose ``got_kind`` says what it was
(:func:`conformance.engine.verdict.error_kind`). The call is judged part by part
(:func:`call_error_parts`: type, message, id, the shape of
:func:`conformance.engine.error_parts.error_parts`), decided by
:func:`conformance.engine.error_parts.conforms`, and a wrong error keeps its parts, so that its
reports say which part differed. The planner's exception is read as data
(:mod:`conformance.engine.object_text`): its text, its class's name and its ``error_id`` can
neither raise into the judge nor compare equal to what they are not.
"""

from __future__ import annotations

from conformance.engine.error_parts import conforms, first_difference, kept
from conformance.engine.namespaces import type_name
from conformance.engine.object_text import one_line, plain_text
from conformance.engine.verdict import Difference, VerdictData, error_kind


class _Unreadable:
    """What an error's ``error_id`` is when reading it raised."""

    def __str__(self):
        return "<an error_id that raises when read>"


_UNREADABLE = _Unreadable()


def read_error_id(raised) -> object:
    """``raised.error_id`` read once (None when absent; :data:`_UNREADABLE` when reading it
    raised: the planner's property)."""
    try:
        return getattr(raised, "error_id", None)
    except Exception:  # noqa: BLE001 - the planner's property: an id that cannot be read
        return _UNREADABLE


def call_error_parts(error: tuple[str, str], base: type, raised, raised_id) -> dict:
    """Each part of ``raised`` against the documented error ``error`` (``(id, message)``), in the
    shape of :func:`conformance.engine.error_parts.error_parts`: ``type`` same when it is an
    instance of ``base`` (the built-in class the subject's error class derives from, read through
    ``type``); ``message`` same when its text is exactly the case's; ``id`` same when it carries
    none (here an id is optional: ``got`` None) or exactly the case's; ``raised_id`` is
    :func:`read_error_id`'s reading."""
    error_id, message = error
    text = plain_text(raised)
    got_text = text if text is not None else one_line(raised)
    same_text = text is not None and str.__eq__(text, message)
    return {
        "type": {"expected": base.__name__, "got": type_name(raised),
                 "same": issubclass(type(raised), base)},
        "message": {"expected": kept(message), "got": kept(got_text), "same": same_text,
                    "first_difference": None if same_text else first_difference(message,
                                                                                got_text)},
        "id": {"expected": error_id,
               "got": None if raised_id is None else one_line(raised_id)[:80],
               "same": raised_id is None or (type(raised_id) is str and raised_id == error_id)},
    }


def judge_error(data: VerdictData, error: tuple[str, str], rule: str, error_class: type, run: str,
                raised) -> bool:
    """Record a difference unless ``raised`` is exactly the documented error ``error``; whether it
    was (every part of :func:`call_error_parts` the same, :func:`conformance.engine.error_parts.
    conforms`); a wrong error's difference keeps the parts (``error_parts``)."""
    error_id, message = error
    want = f"{error_class.__name__} {error_id}: {message}"
    if raised is None:  # where only a project rule raises, returning differs from that rule
        what = "no-error" if rule == "contract" else "error"
        data.add(Difference(0, run, what, "error", None, want, "returned (no error)", rule,
                            got_kind="no error" if what == "error" else None))
        return False
    base = next(c for c in error_class.__mro__ if c.__module__ == "builtins")
    raised_id = read_error_id(raised)
    parts = call_error_parts(error, base, raised, raised_id)
    if conforms(parts):
        return True
    kind = parts["type"]
    got = f"{type_name(raised)} {one_line(raised_id)}: {one_line(raised)}"
    fake = not kind["same"] and kind["got"] == base.__name__
    id_text = one_line(raised_id)[:80] if type(raised_id) is str else None
    data.add(Difference(0, run, "error", "error", None, want, got, rule,
                        got_kind=error_kind(kind["got"], fake, id_text,
                                            not parts["message"]["same"] and id_text == error_id),
                        error_parts=parts))
    return False
