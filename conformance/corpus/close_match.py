"""A "did you mean" for a name a user typed that names nothing: a case id given to ``--case``,
``record`` or ``repro``, or a key a case file's schema does not allow
(:mod:`conformance.corpus.schema_words`).

The closest of the names that exist by :func:`difflib.get_close_matches` (its ratio at least
:data:`CUTOFF`, difflib's default), so that ``--case nu18-four-mixd`` says
``(did you mean 'nu18-four-mixed'?)`` beside the message it already gave. A planner's attribute
(``mypkg.kernels:lauch``) gets the same words from the subject's own loader of external planners,
under ``impls/``, which cannot import the harness.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable

CUTOFF = 0.6
"""The least :class:`difflib.SequenceMatcher` ratio of a suggestion (difflib's default)."""


def close_to(word: str, names: Iterable[str]) -> str | None:
    """The name of ``names`` closest to ``word``, None when none is close (or ``word`` is one)."""
    names = [n for n in names if isinstance(n, str)]
    if word in names:
        return None
    found = difflib.get_close_matches(word, names, n=1, cutoff=CUTOFF)
    return found[0] if found else None


def did_you_mean(word: str, names: Iterable[str]) -> str:
    """`` (did you mean 'NAME'?)`` for :func:`close_to`'s name (quoted as Python's ``repr``), or
    ``""`` when none is close: appended to a message that says ``word`` names nothing."""
    close = close_to(word, names)
    return f" (did you mean {close!r}?)" if close is not None else ""
