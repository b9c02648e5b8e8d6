"""Untrusted text (a case's description, ``xfail.reason`` or ``source.ref``, a planner's exception
message, a results file's fields) made safe for the terminal, and cut to the length the harness
keeps (docs/robustness.md, *Limits*).

:func:`terminal_text` is the one escaping layer of the terminal sink: every control character
(ESC, OSC, ``\\r``, the other C0 and C1 controls, bidi overrides) is written as its Python escape,
newlines kept as line breaks. :func:`kept` cuts a message to :data:`MAX_KEPT_MESSAGE` characters
and says how long it was.
"""

from __future__ import annotations

import re

from conformance.corpus.limits import MAX_KEPT_MESSAGE
from conformance.corpus.case_file import printable

__all__ = ["MAX_KEPT_MESSAGE", "counted", "help_text", "kept", "natural_key", "printable",
           "terminal_text"]


def counted(n: int, noun: str, plural: str | None = None) -> str:
    """``n`` and ``noun``, plural unless ``n`` is 1: ``1 value``, ``0 values``, ``3 values``
    (``plural``: where adding an ``s`` is not the plural)."""
    return f"{n} {noun if n == 1 else plural or noun + 's'}"


def kept(text: str | None, limit: int = MAX_KEPT_MESSAGE) -> str | None:
    """``text`` whole when it has at most ``limit`` characters, else its first ``limit`` followed
    by ``... [truncated, N characters in all]``; None stays None."""
    if text is None or len(text) <= limit:
        return text
    return f"{text[:limit]}... [truncated, {len(text)} characters in all]"


def terminal_text(text: str) -> str:
    """``text`` (cut by :func:`kept`) for the terminal: each line through
    :func:`~conformance.corpus.case_file.printable`, line breaks kept."""
    return "\n".join(printable(line) for line in (kept(text) or "").split("\n"))


def natural_key(text: str | None) -> tuple:
    """A sort key that orders the numbers inside ids and paths by value (``bs-1``, ``bs-128``,
    ``bs-1025``; ``$.cases[2]`` before ``$.cases[10]``): the digit runs as ints, the rest as text,
    alternating, so that two keys always compare."""
    return tuple(int(t) if i % 2 else t for i, t in enumerate(re.split(r"(\d+)", text or "")))



def help_text(doc: str | None) -> str:
    """A command module's docstring as ``--help`` prints it: the reStructuredText markup a
    terminal shows literally taken out (``` ``x`` ``` and ``:mod:`x``` read ``x``)."""
    text = re.sub(r":[a-z]+:`~?([^`]+)`", r"\1", doc or "")
    return re.sub(r"``(.+?)``", r"\1", text, flags=re.S)
