"""What a wrong error got right and what it got wrong, part by part, as data (spec section 4).

A step that expects a documented error passes only when the call raises exactly it: an instance
of a subclass of the expected built-in class, the exact message, the catalog id (spec section 4:
each error is raised "as its exact message"). A wrong error's
:class:`~conformance.engine.verdict.Difference` holds the expected and the raised error as one line
of text each; :func:`error_parts` says which of the three parts differed, and
:func:`add_error_parts` puts that into each wrong error of a verdict (``Difference.error_parts``),
from the case and the observation it was judged on, so that a report can say "the type matched,
the message differed" from data, never from those lines' text
(:func:`conformance.engine.verdict.describe`).

The parts are compared as :meth:`conformance.engine.judge._Judging.error` compares them: the type
by the raised class's built-in bases, the message after ``{device}`` is replaced by the device the
call ran on, the id as the exception's ``error_id`` or else the catalog id whose template its
message matches. A difference for which every part compares equal here is left without parts.
"""

from __future__ import annotations

from conformance.corpus.corpus_subject import errors as _errors
from conformance.corpus.loader import Case
from conformance.engine.failure_words import one_line
from conformance.engine.observe import Observation, Raised
from conformance.engine.verdict import VerdictData

MESSAGE_CHARS = 300
"""Characters of each message an error's parts keep (a planner's message can be of any length);
``first_difference`` is counted on the whole messages."""
PARTS = ("type", "message", "id")
"""The parts of a documented error (spec section 4), in the order a report names them."""


def _first_difference(a: str, b: str) -> int | None:
    """The index of the first character where ``a`` and ``b`` differ (the shorter one's length
    when one starts the other), None when they are equal."""
    if a == b:
        return None
    return next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))


def _kept(text: str) -> str:
    return text if len(text) <= MESSAGE_CHARS else text[:MESSAGE_CHARS] + "..."


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
    message = want["message"].replace("{device}", device)
    got_id = raised.error_id or _errors.identify(raised.message)
    return {
        "type": {"expected": want["type"], "got": one_line(raised.class_name),
                 "same": want["type"] in raised.builtin_bases},
        "message": {"expected": _kept(message), "got": _kept(raised.message),
                    "same": raised.message == message,
                    "first_difference": _first_difference(message, raised.message)},
        "id": {"expected": want["id"], "got": None if got_id is None else one_line(str(got_id)),
               "same": got_id == want["id"]},
    }


def add_error_parts(verdict: VerdictData, case: Case, observation: Observation,
                    device: str) -> None:
    """Fill ``error_parts`` (:func:`error_parts`) into every kept wrong error of ``verdict``
    (``what`` ``error``) that has none, from the step of ``case`` and the call of ``observation``
    it was judged on (the same step index and run); one whose call raised nothing or whose parts
    all compare equal here is left as it is."""
    raised = {(s.index, s.run): s.raised for s in observation.steps}
    for diff in verdict.differences:
        if diff.what != "error" or diff.field != "error" or diff.error_parts is not None:
            continue
        got = raised.get((diff.step, diff.run))
        step = case.steps[diff.step] if 0 <= diff.step < len(case.steps) else None
        if got is None or step is None or step.error is None:
            continue
        parts = error_parts(step.error, device, got)
        if not all(parts[p]["same"] for p in PARTS):
            diff.error_parts = parts
