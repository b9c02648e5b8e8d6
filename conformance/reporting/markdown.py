"""Untrusted text (failure reports, planner names, exception messages) placed in Markdown so that
it renders as the text it is, never as Markdown or HTML of its own (GitHub-flavoured Markdown,
CommonMark sections 4.5 "Fenced code blocks" and 6.1 "Code spans").
"""

from __future__ import annotations

import html
import re

from conformance.corpus.case_file import printable


def _longest_run(text: str, char: str) -> int:
    return max((len(m) for m in re.findall(f"{re.escape(char)}+", text)), default=0)


def fenced(text: str) -> str:
    """``text`` as a fenced code block whose fence (backticks) is longer than any backtick run
    inside, so no line of ``text`` can close it (CommonMark: a closing fence is at least as long
    as the opening one). Each line's control and format characters (ESC, CR, bidi overrides)
    are escaped (:func:`~conformance.corpus.case_file.printable`): a terminal or viewer shows the
    text, never acts on it."""
    text = "\n".join(printable(line) for line in text.splitlines())
    fence = "`" * max(3, _longest_run(text, "`") + 1)
    return f"{fence}\n{text.rstrip()}\n{fence}"


def code_span(text: str) -> str:
    """``text`` as one inline code span (newlines become spaces), delimited by more backticks than
    any run inside, padded with a space where it starts or ends with a backtick; ``|`` escaped,
    as GitHub requires inside table cells; control and format characters escaped."""
    text = printable(" ".join(text.splitlines()))
    ticks = "`" * (_longest_run(text, "`") + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{ticks}{pad}{text.replace('|', chr(92) + '|')}{pad}{ticks}"


def html_text(text: str) -> str:
    """``text`` for a line of raw HTML in Markdown (``<summary>...</summary>``): one line (a blank
    line would end the HTML block, and what follows would render as Markdown), control and format
    characters escaped, ``&``, ``<``, ``>`` and quotes escaped, so it is text, never a tag."""
    return html.escape(printable(" ".join(text.splitlines())), quote=True)
