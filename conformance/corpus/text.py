"""Untrusted text (a case's description, ``xfail.reason`` or ``source.ref``, a planner's exception
message, a results file's fields) made safe for the terminal, and cut to the length the harness
keeps (README, *Limits*).

:func:`terminal_text` is the one escaping layer of the terminal sink: every control character
(ESC, OSC, ``\\r``, the other C0 and C1 controls, bidi overrides) is written as its Python escape,
newlines kept as line breaks. :func:`kept` cuts a message to :data:`MAX_KEPT_MESSAGE` characters
and says how long it was.
"""

from __future__ import annotations

from conformance.corpus.limits import MAX_KEPT_MESSAGE
from conformance.corpus.case_file import printable

__all__ = ["MAX_KEPT_MESSAGE", "kept", "printable", "terminal_text"]


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
