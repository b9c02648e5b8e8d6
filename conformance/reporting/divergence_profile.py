"""The divergence profile: per planner, what it does in each situation of spec section 6.

Derived from a run's results (a results file's entries, or the same dicts during a run): every
result of a case whose values reach a section-6 row (``out_of_contract``, from
:func:`conformance.corpus.section6.out_of_contract`) says what the planner did there, from its
observed outcome (before the profile and the manifests judged it): the project's rule when it
passed, ``crashes``, ``reads out of bounds`` (a value from a guard zone, a sanitizer report),
``raises`` (an exception on a valid input), else the row's word for another value. A row's cell is
taken from the cases that reach only that row when there are any (a random mix that reaches three
rows cannot say which one it differs on), else from every case that reaches it.
"""

from __future__ import annotations

from collections import Counter

from tabulate import tabulate

from conformance.corpus.section6 import ROWS, Row
from conformance.reporting.markdown import code_span
from conformance.reporting.results_format import PSEUDO_PLANNERS

IGNORED = ("skip", "xfail", "error")
"""Observed outcomes that say nothing about the planner (not run, or the case's own fault)."""


def behaviour(observed: str, message: str | None, row: Row) -> str | None:
    """What one result says the planner does in ``row``'s situation (None: says nothing)."""
    if observed in IGNORED or observed is None:
        return None
    if observed == "pass":
        return row.project
    if observed == "crash":
        return "crashes"
    if observed == "timeout":
        return "hangs"
    if observed == "oob":
        return "reads out of bounds"
    if "on a valid input" in (message or ""):
        return "raises"
    return row.other


def profile(results: list[dict]) -> dict:
    """``{"planners": [...], "rows": [{key, situation, project, upstream, cells: {planner:
    "clamps x3, crashes x1" or "-"}, cases: {planner: [case ids]}}]}`` from result dicts with
    ``planner``, ``case``, ``observed`` (or ``status``), ``message`` and ``out_of_contract``."""
    planners = sorted({r["planner"] for r in results if r["planner"] not in PSEUDO_PLANNERS})
    rows = []
    for row in ROWS:
        cells, cases = {}, {}
        for planner in planners:
            mine = [r for r in results if r["planner"] == planner
                    and row.key in (r.get("out_of_contract") or ())]
            only = [r for r in mine if len(r["out_of_contract"]) == 1]
            counts: Counter = Counter()
            for r in only or mine:
                word = behaviour(r.get("observed") or r["status"], r.get("message"), row)
                if word is not None:
                    counts[word] += 1
            cell = ", ".join(f"{w} x{n}" for w, n in counts.most_common()) or "-"
            cells[planner] = cell if only or not mine else f"in mixes: {cell}"
            cases[planner] = sorted(r["case"] for r in only or mine)
        rows.append({"key": row.key, "situation": row.situation, "project": row.project,
                     "upstream": row.upstream, "cells": cells, "cases": cases})
    return {"planners": planners, "rows": rows}


def render(model: dict, fmt: str = "simple") -> str:
    """The profile as a table (tabulate's ``fmt``): one line per section-6 row. In ``github``
    (Markdown) the planner names, read from a results file, are code spans."""
    table = [[r["situation"], r["project"], *[r["cells"][p] for p in model["planners"]]]
             for r in model["rows"]]
    names = [code_span(p) if fmt == "github" else p for p in model["planners"]]
    return tabulate(table, headers=["spec §6 situation", "this project", *names], tablefmt=fmt)
