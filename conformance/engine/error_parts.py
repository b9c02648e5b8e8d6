"""A raise against the documented error of its step, part by part, as data (spec section 4).

A step that expects a documented error passes only when the call raises exactly it: an instance
of a subclass of the expected built-in class (a class that merely bears its name is another
error), the exact message (``{device}`` in the case's text is the device the call ran on), and
the catalog id (the one the exception carries, else the one whose template its message matches).
:func:`error_parts` compares the three parts; the judge decides from them
(:func:`conformance.engine.step_error.error_difference`: the call conforms when every part is
``same``) and keeps them in the wrong error's :class:`~conformance.engine.verdict.Difference`
(``error_parts``), so that a report says "the type matched, the message differed" from data,
never from text (:func:`conformance.engine.verdict.wrong_error_words`).
"""

from __future__ import annotations

from conformance.corpus.corpus_subject import errors as _errors
from conformance.engine.failure_words import one_line
from conformance.engine.observe import Raised
from conformance.engine.verdict import ERROR_PARTS

MESSAGE_CHARS = 300
"""Characters of each message an error's parts keep (a planner's message can be of any length);
``first_difference`` is counted on the whole messages."""


def first_difference(a: str, b: str) -> int | None:
    """The index of the first character where ``a`` and ``b`` differ (the shorter one's length
    when one starts the other), None when they are equal."""
    if a == b:
        return None
    return next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))


def kept(text: str) -> str:
    """``text`` cut to :data:`MESSAGE_CHARS` characters (``...`` marks a cut)."""
    return text if len(text) <= MESSAGE_CHARS else text[:MESSAGE_CHARS] + "..."


def documented_message(want: dict, device: str) -> str:
    """The exact message the step ``want`` documents, ``{device}`` replaced by the device the
    call ran on (``cpu``, ``cuda:0``)."""
    return want["message"].replace("{device}", device)


def conforms(parts: dict) -> bool:
    """Whether a raise with these :func:`error_parts` is the documented error: every part
    ``same``."""
    return all(parts[p]["same"] for p in ERROR_PARTS)


def error_parts(want: dict, device: str, raised: Raised) -> dict:
    """Each part of ``raised`` against the documented error ``want``.

    Args:
        want: the step's expected error, ``{"type", "id", "message"}`` as a case file writes it
            (``message`` may hold ``{device}``).
        device: the device the call ran on, as the judge names it (``cpu``, ``cuda:0``).
        raised: what the call raised.

    Returns:
        ``{"type": {"expected", "got", "same"}, "message": {"expected", "got", "same",
        "first_difference"}, "id": {"expected", "got", "same"}}``: ``type.got`` the raised
        class's name (one line), ``same`` when it is a subclass of the expected built-in (a
        subclass of another name matches, a class merely named like it does not); each message
        cut to :data:`MESSAGE_CHARS` characters, ``first_difference`` the index of the first
        character where the whole messages differ (None when ``same``); ``id.got`` the raised
        ``error_id``, else the catalog id whose template the message matches, else None.
    """
    message = documented_message(want, device)
    got_id = raised.error_id or _errors.identify(raised.message)  # the corpus catalog's id
    return {
        "type": {"expected": want["type"], "got": one_line(raised.class_name),
                 "same": want["type"] in raised.builtin_bases},
        "message": {"expected": kept(message), "got": kept(raised.message),
                    "same": raised.message == message,
                    "first_difference": first_difference(message, raised.message)},
        "id": {"expected": want["id"], "got": None if got_id is None else one_line(str(got_id)),
               "same": got_id == want["id"]},
    }
