"""The conformance summary table that ``pytest conformance/`` prints at the end of a run.

One row per planner: its name, its mode, a count per outcome (:data:`OUTCOMES`, headed by the
results file's status for it, :data:`~conformance.plugin.outcomes.STATUS`: ``pass``, ``fail``, ...
``not-wrapper``, ``declared``) and the seconds its items took. Columns are separated by two spaces
(tabulate's ``simple`` format), so that with the built-in planners a line stays within
:data:`WIDTH` characters; a longer planner name (an external ``module:function``) or mode wraps
inside its column (after a ``.``, ``:``, ``_`` or ``-``; the mode at a space) onto continuation lines
whose other cells are blank.
"""

from __future__ import annotations

import re
import textwrap

import tabulate as tabulate_module
from tabulate import tabulate

from conformance.plugin.outcomes import OUTCOMES, STATUS
from conformance.reporting.results_format import JUDGED_MEANING

WIDTH = 120
"""The widest line the summary prints (a terminal of 120 columns)."""

HEADERS: tuple[str, ...] = ("planner", "mode", *(STATUS[o] for o in OUTCOMES), "seconds")
"""The table's column headers, in order."""

LEGEND = ("pass..error: pytest's outcomes; judged: "
          + "; ".join(f"{s}, {meaning}" for s, meaning in JUDGED_MEANING.items()))
"""What the count columns are: printed once, under the last subject's table (one paragraph:
:func:`legend_lines` wraps it)."""

_GAP = 2  # tabulate's "simple" format: two spaces between columns
_MIN_MODE = 12


_NAME_BREAK = re.compile(r"(?<=[.:/_-])")  # a dotted module path breaks after its separators
_WORD_BREAK = re.compile(r"(?<= )")
_SUBJECT_LINE = re.compile(r"subject \S+:")  # the line above each subject's table (plugin.tally)


def note_lines(text: str, width: int = WIDTH) -> list[str]:
    """A one-paragraph note of the terminal summary on lines of at most ``width`` characters
    (continuations indented two spaces; a word longer than a line, such as a planner's name, is
    never broken)."""
    return textwrap.wrap(text, width, subsequent_indent="  ", break_long_words=False,
                         break_on_hyphens=False) or [""]


def _width(column: list[str]) -> int:
    return max(len(cell) for cell in column)


def _wrap(text: str, width: int, breaks: re.Pattern) -> str:
    """``text`` on lines of at most ``width`` characters, broken after ``breaks`` where it can
    and inside a longer piece where it must (joined by newlines: tabulate's multi-line cell)."""
    lines = [""]
    for piece in breaks.split(text):
        while len(piece) > width:
            if lines[-1]:
                lines.append("")
            lines[-1], piece = piece[:width], piece[width:]
            lines.append("")
        if len(lines[-1]) + len(piece) > width and lines[-1]:
            lines.append("")
        lines[-1] += piece
    return "\n".join(line.rstrip() for line in lines if line)


def legend_lines(width: int = WIDTH) -> list[str]:
    """:data:`LEGEND` on lines of at most ``width`` characters (60 at least): what the run prints
    once, under the last subject's table, since every table has the same columns."""
    return note_lines(LEGEND, max(width, 60))


def render(rows: list[list], width: int = WIDTH) -> list[str]:
    """The summary table's lines for ``rows`` ([planner, mode, count per outcome..., seconds]),
    without the legend (:func:`legend_lines`).

    Returns lines of at most ``width`` characters when ``width`` leaves the planner and mode
    columns room for their headers and a 12-character mode (106 characters with these headers;
    always at 120).
    """
    cols = list(zip(*([str(c) for c in row] for row in [list(HEADERS), *rows])))
    fixed = sum(_width(list(c)) for c in cols[2:]) + _GAP * (len(HEADERS) - 1)
    planner_w, mode_w = _width(list(cols[0])), _width(list(cols[1]))
    room = max(width - fixed, 2)
    if planner_w + mode_w > room:
        mode_w = min(mode_w, max(_MIN_MODE, room // 3), room - 1)
        planner_w = max(room - mode_w, len(HEADERS[0]))
        rows = [[_wrap(str(row[0]), planner_w, _NAME_BREAK),
                 _wrap(str(row[1]), max(mode_w, len(HEADERS[1])), _WORD_BREAK), *row[2:]]
                for row in rows]
    padding, tabulate_module.MIN_PADDING = tabulate_module.MIN_PADDING, 0  # no extra header pad
    try:
        table = tabulate(rows, headers=HEADERS, tablefmt="simple")
    finally:
        tabulate_module.MIN_PADDING = padding
    return table.splitlines()


def parse(lines: list[str]) -> dict[str, list[str]]:
    """{planner: [planner, mode, counts..., seconds]} from printed summary ``lines`` (wrapped names
    and modes joined again), cut at the columns of the rule under the header: the inverse of
    :func:`render`, for tests and tools that read a run's output. The first table's rows end at a
    blank line, the legend or the next subject's ``subject NAME:`` line."""
    rule = next(i for i, ln in enumerate(lines) if ln.startswith("-") and set(ln) <= {"-", " "})
    spans = [(m.start(), m.end()) for m in re.finditer(r"-+", lines[rule])]
    rows: list[list[str]] = []
    for line in lines[rule + 1:]:
        if not line.strip() or line.startswith(LEGEND[:20]) or _SUBJECT_LINE.fullmatch(line):
            break
        cells = [line[a:b + 1].strip() for a, b in spans]
        if rows and not any(cells[2:]):  # a continuation line of a wrapped name or mode
            rows[-1][0] += cells[0]
            rows[-1][1] = f"{rows[-1][1]} {cells[1]}".strip()  # the mode broke at a space
        else:
            rows.append(cells)
    return {row[0]: row for row in rows}
