"""The documented errors x planners table: for every id of the error catalog (``impls/<subject>/errors.py``,
spec section 4), the cases that expect it and, per planner, in how many of them every step that
expects it raised exactly it.

A case counts against an error only when a step expecting that error failed
(:func:`conformance.reporting.verdict_view.error_outcomes`, from the verdict's ``error_steps``):
a planner whose only bug is a value in a valid step of an ``err-steps-*`` case keeps its error
row green. A case with no verdict (crash, timeout, sanitizer report, skip) is counted apart as
not judged, never as passed or failed; a declared divergence counts as passed and is named.
"""

from __future__ import annotations

from tabulate import tabulate

from conformance.reporting.markdown import code_span
from conformance.reporting.verdict_view import error_outcomes
from conformance.corpus.corpus_subject import errors as _errors

CATALOG = _errors.CATALOG


def cell(outcomes: list[str]) -> dict:
    """One planner's cell from the outcomes of its cases that expect one id.

    Returns:
        ``passed`` (ok or declared), ``failed``, ``judged`` (passed + failed), ``declared``,
        ``not_judged``, ``total`` (cases), and ``ok``: True when nothing failed and something
        was judged.
    """
    passed = sum(o in ("ok", "declared") for o in outcomes)
    failed = outcomes.count("failed")
    return {"passed": passed, "failed": failed, "judged": passed + failed,
            "declared": outcomes.count("declared"), "not_judged": outcomes.count("not judged"),
            "total": len(outcomes), "ok": failed == 0 and passed > 0}


def catalog(results: list[dict], planners: list[str]) -> list[dict]:
    """One row per catalog entry: ``id``, ``template``, ``spec``, ``reach``, ``cases`` (the case
    ids that expect it) and ``cells`` ({planner: :func:`cell`}, planners with such a case).
    Only the corpus subject's results count (``subject`` null): a one-call subject's error ids
    are its own catalog's, even where one shares a name with this one's (``dtype``)."""
    outcomes = [(r, error_outcomes(r)) for r in results if not r.get("subject")]
    rows = []
    for entry in CATALOG.values():
        covering = [(r, o[entry.id]) for r, o in outcomes if entry.id in o]
        cells = {}
        for p in planners:
            mine = [o for r, o in covering if r["planner"] == p]
            if mine:
                cells[p] = cell(mine)
        rows.append({"id": entry.id, "template": entry.template, "spec": entry.spec,
                     "reach": entry.reach, "cases": sorted({r["case"] for r, _ in covering}),
                     "cells": cells})
    return rows


def columns(rows: list[dict], planners: list[str]) -> list[str]:
    """The ``planners`` that have a cell in some row of ``rows`` (catalog or hazard rows): a
    column of only dashes (a one-call subject's planner, a case file that did not load) is left
    out."""
    return [p for p in planners if any(p in row["cells"] for row in rows)]


def cell_text(c: dict | None) -> str:
    """``17/18``, ``5/5 +1 not judged``, ``not judged (2)``, ``-`` (no case for this planner)."""
    if c is None:
        return "-"
    if not c["judged"]:
        return f"not judged ({c['not_judged']})"
    text = f"{c['passed']}/{c['judged']}"
    if c["declared"]:
        text += f" ({c['declared']} declared)"
    if c["not_judged"]:
        text += f" +{c['not_judged']} not judged"
    return text


def failing_lines(rows: list[dict]) -> list[str]:
    """``dtype: P 17/18`` for each (id, planner) where a step expecting the error failed."""
    return [f"{row['id']}: {planner} {cell_text(c)}" for row in rows
            for planner, c in row["cells"].items() if c["failed"]]


def render(rows: list[dict], planners: list[str], fmt: str) -> str:
    """The covered rows as a table (tabulate ``fmt``; ``github``: names as code spans)."""
    name = code_span if fmt == "github" else str
    body = [[name(row["id"]), len(row["cases"]),
             *[cell_text(row["cells"].get(p)) for p in planners]]
            for row in rows if row["cases"]]
    return tabulate(body, headers=["error", "cases", *[name(p) for p in planners]],
                    tablefmt=fmt)
