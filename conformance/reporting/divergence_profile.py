"""The divergence profile: per planner, what it does in each situation of spec section 6.

Derived from a run's results (a results file's entries, or the same dicts during a run): every
result of a case that reaches a section-6 row (``out_of_contract``, from
the corpus subject's ``section6.out_of_contract``) says what the planner did there, from the
judge's verdict on the elements where that situation shows (``verdict.situations``,
:mod:`conformance.engine.verdict`), never from the case's status as a whole: a planner whose only
bug is elsewhere in the case is credited with the project's rule where it followed it. A pass
follows every rule; a crash or a hang is credited to a row only from cases that reach no other row
(a case that reaches three rows cannot say which one crashed it).
"""

from __future__ import annotations

import re
import textwrap
from collections import Counter

import tabulate as tabulate_module
from tabulate import tabulate

from conformance.corpus.corpus_subject import section6 as _section6
from conformance.reporting.markdown import code_span
from conformance.reporting.results_format import PSEUDO_PLANNERS

ROWS = _section6.ROWS
Row = _section6.Row

IGNORED = ("skip", "xfail", "error")
"""Observed outcomes that say nothing about the planner (not run, or the case's own fault)."""
WHOLE_CASE = {"crash": "crashes", "timeout": "hangs", "oob": "reads out of bounds"}
"""Outcomes with no per-element verdict (the sanitizer's report, a dead or hung child)."""


def behaviour(result: dict, row: Row) -> str | None:
    """What one result says the planner does in ``row``'s situation (None: says nothing)."""
    observed = result.get("observed") or result.get("status")
    if observed in IGNORED or observed is None:
        return None
    if observed == "pass":
        return row.project
    verdict = result.get("verdict")
    if verdict is None:
        if observed in WHOLE_CASE and len(result.get("out_of_contract") or ()) == 1:
            return WHOLE_CASE[observed]
        return None
    word = verdict.get("situations", {}).get(row.key)
    return {"rule": row.project, "upstream": row.upstream, "other": row.other,
            "outside": "reads out of bounds",
            "never-written": "leaves it unwritten", "raised": "raises",
            "raised-shared": "raises (on a step with other situations)",
            "no-error": "raises no error", None: None}[word]


def profile(results: list[dict]) -> dict:
    """``{"planners": [...], "rows": [{key, situation, project, upstream, cells: {planner:
    "clamps x3, crashes x1" or "-"}, cases: {planner: [case ids]}}], "reaching": N, "empty":
    line}`` from result dicts with ``planner``, ``case``, ``observed`` (or ``status``),
    ``verdict`` and ``out_of_contract``; ``reaching``: how many results of those planners are of
    a case that reaches a row (whether or not they say what the planner did there); ``empty``:
    :func:`empty_line`, the line a report shows instead of a table with nothing in it."""
    planners = sorted({r["planner"] for r in results if r["planner"] not in PSEUDO_PLANNERS
                       and not r.get("subject")})  # spec §6 of the corpus engine's subject
    keys = {row.key for row in ROWS}
    reaching = sum(1 for r in results if r["planner"] in planners
                   and keys.intersection(r.get("out_of_contract") or ()))
    rows = []
    for row in ROWS:
        cells, cases = {}, {}
        for planner in planners:
            counts: Counter = Counter()
            seen = []
            for r in results:
                if r["planner"] != planner or row.key not in (r.get("out_of_contract") or ()):
                    continue
                word = behaviour(r, row)
                if word is not None:
                    counts[word] += 1
                    seen.append(r["case"])
            cells[planner] = ", ".join(f"{w} x{n}" for w, n in counts.most_common()) or "-"
            cases[planner] = sorted(seen)
        rows.append({"key": row.key, "situation": row.situation, "project": row.project,
                     "upstream": row.upstream, "cells": cells, "cases": cases})
    model = {"planners": planners, "rows": rows, "reaching": reaching}
    return {**model, "empty": empty_line(model)}


def reached(model: dict) -> bool:
    """Whether any row of ``model`` says anything about any planner."""
    return any(cell != "-" for row in model["rows"] for cell in row["cells"].values())


def empty_line(model: dict) -> str | None:
    """The one line a report shows instead of the profile's table when no cell of ``model`` says
    anything (:func:`reached`), a table of ``-`` only: no case of the run reached a situation of
    spec section 6, or the results of those that did say nothing of the planner there (skipped,
    an expected failure, the case's own error, a crash in a case that reaches several rows:
    :func:`behaviour`); None when the table has something to show."""
    if reached(model):
        return None
    n = model.get("reaching") or 0
    if not n:
        return "No case of this run reached a situation of spec §6."
    results = "result" if n == 1 else "results"
    return (f"No result of this run says what a planner does in a situation of spec §6: the {n} "
            f"{results} of cases that reach one say nothing of it (skipped, an expected failure, "
            "the case's own error, or a crash in a case that reaches several).")


FIXED_WIDTHS = (30, 16)
"""Widest the situation and the project's rule are at first in a table of :func:`render` given a
width: what decides how many planners fit beside them; room left over widens the situation first."""
MIN_PLANNER_WIDTH = 16
"""Narrowest a planner's column may be in a table of :func:`render` given a width; planners that
do not fit beside each other at it go to the next table."""
CONTINUATION = "  "
"""What starts each further line of a cell wrapped in a table of :func:`render` given a width, so
that a long situation reads as one row, not as a row of its own."""
_GAP = 2  # tabulate's "simple" format: two spaces between columns


def table_or_line(model: dict, fmt: str = "simple") -> str:
    """:func:`render` of ``model``, or its :func:`empty_line` when its table would hold only
    ``-``."""
    return empty_line(model) or render(model, fmt)


def render(model: dict, fmt: str = "simple", width: int | None = None) -> str:
    """The profile as a table (tabulate's ``fmt``): one line per section-6 row. In ``github``
    (Markdown) the planner names, read from a results file, are code spans.

    With ``width`` (a terminal's columns), no line is wider: a cell too long for its column wraps
    at words onto further lines, each indented by :data:`CONTINUATION`, so that only a row's first
    line starts at the left margin. The situation and the rule start within
    :data:`FIXED_WIDTHS`; the planners that do not fit at :data:`MIN_PLANNER_WIDTH` each go into
    further tables, one after another with a blank line between; the room left in a table widens
    the situation, then the planners, then the rule, each up to what it needs (:func:`_widths`)."""
    planners = model["planners"]
    whole = _table(model, planners, fmt, None)
    if width is None or max(map(len, whole.splitlines())) <= width:
        return whole
    room = width - sum(FIXED_WIDTHS) - 2 * _GAP
    per_table = max(1, room // (MIN_PLANNER_WIDTH + _GAP))
    tables = []
    for start in range(0, max(len(planners), 1), per_table):
        group = planners[start:start + per_table]
        tables.append(_table(model, group, fmt, _widths(model, group, width)))
    return "\n\n".join(tables)


def _cells(model: dict, planners: list[str]) -> tuple[list[str], list[list[str]]]:
    headers = ["spec §6 situation", "this project", *planners]
    rows = [[r["situation"], r["project"], *[r["cells"][p] for p in planners]]
            for r in model["rows"]]
    return headers, rows


def _widths(model: dict, planners: list[str], width: int) -> list[int]:
    """Each column's width in a table of ``planners`` at most ``width`` wide: the situation and
    the rule within :data:`FIXED_WIDTHS`, each planner within :data:`MIN_PLANNER_WIDTH`, then
    what is left shared out, one character at a time, to the situation (the row's name), then the
    planners, then the rule, none past what its cells and header need."""
    headers, rows = _cells(model, planners)
    need = [max(len(h), *(len(row[i]) for row in rows)) for i, h in enumerate(headers)]
    widths = [min(need[0], FIXED_WIDTHS[0]), min(need[1], FIXED_WIDTHS[1]),
              *(min(n, MIN_PLANNER_WIDTH) for n in need[2:])]
    left = width - sum(widths) - _GAP * (len(widths) - 1)
    for columns in ([0], range(2, len(widths)), [1]):
        while left > 0 and (wanting := [i for i in columns if widths[i] < need[i]]):
            for i in wanting[:left]:
                widths[i] += 1
            left -= len(wanting[:left])
    return widths


_GLUE = "\u00a0"  # no ASCII space: textwrap never breaks there
_COUNT = re.compile(r" (x\d+)(?=,|$)")


def _wrapped(text: str, width: int, indent: str) -> str:
    """``text`` on lines of at most ``width`` characters (tabulate's multi-line cell), each line
    after the first starting with ``indent``; a count (``validated x3``) stays on its word's
    line."""
    glued = _COUNT.sub(_GLUE + r"\1", text)
    lines = textwrap.wrap(glued, width, subsequent_indent=indent, break_on_hyphens=False)
    return "\n".join(lines).replace(_GLUE, " ") or text


def _table(model: dict, planners: list[str], fmt: str, widths: list[int] | None) -> str:
    headers, rows = _cells(model, planners)
    headers = [*headers[:2], *(code_span(p) if fmt == "github" else p for p in headers[2:])]
    if widths is None:
        return tabulate(rows, headers=headers, tablefmt=fmt)
    # wrapped by hand (tabulate's own wrapping has no indent), and no padding past a header: a
    # column is as wide as _widths says
    rows = [[_wrapped(cell, w, CONTINUATION) for cell, w in zip(row, widths)] for row in rows]
    headers = [_wrapped(h, w, "") for h, w in zip(headers, widths)]
    padding, tabulate_module.MIN_PADDING = tabulate_module.MIN_PADDING, 0
    try:
        return tabulate(rows, headers=headers, tablefmt=fmt)
    finally:
        tabulate_module.MIN_PADDING = padding
