"""Which not-passing results a report shows in full: at most N of each failure group.

One bug of a planner fails dozens of cases alike (an off-by-one in the last row's write offset
failed 86 of them), and a report that printed every one in full ran to 120,000 characters of
Markdown, past the 65,536 a GitHub comment holds. The groups
(:mod:`conformance.reporting.failure_groups`: a planner's failures keyed by their first
difference) already say what the failures share; a report shows every group with its exact count
and the full report (the failure's text, its rerun command) of the first :data:`DEFAULT_LIMIT` of
each, and says how many it left out and that :data:`OPTION` ``0`` shows them all. The results file
keeps every result; the headline counts and the tables count every one.

The first of a group are those the group's table lists first (its cases with the fewest differing
elements first, then in natural order: the smallest repro leads), so that the table's first case
ids are the reports shown; a result's group is
:func:`~conformance.reporting.failure_groups.pattern` under the run's profile, as the table's.
"""

from __future__ import annotations

from conformance.corpus.text import counted, natural_key
from conformance.reporting.failure_groups import pattern

DEFAULT_LIMIT = 3
"""Full reports shown per failure group unless :data:`OPTION` says otherwise."""
OPTION = "--max-failures-per-group"
"""``python -m conformance report``'s option for the limit (``0``: no limit)."""


def limit_details(failures: list[dict], found: list[dict], profile: str | None,
                  limit: int) -> int:
    """Mark each entry of ``failures`` (the report's failure list: results with the report's
    planner label) ``detailed``: True for a judged, not failed entry (not in any group) and for
    the first ``limit`` results of each group of ``found``
    (:func:`~conformance.reporting.failure_groups.groups` of the same results and ``profile``),
    in the order its pattern lists their cases; every one when ``limit`` is 0. Adds to each pattern of
    ``found`` ``detailed`` and ``left_out`` (counts of its results). Returns how many were left out.

    Raises:
        ValueError: ``limit`` is negative.
    """
    if limit < 0:
        raise ValueError(f"{OPTION} {limit}: must be 0 (every failure) or more")
    members: dict[tuple, list[dict]] = {}
    for f in failures:
        f["detailed"] = True
        if not f["judged"]:
            members.setdefault((str(f["planner"]), pattern(f, profile)), []).append(f)
    left_out = 0
    for group in found:
        for p in group["patterns"]:
            rank = {c["case"]: i for i, c in enumerate(p["cases"])}
            mine = sorted(members.get((group["planner"], p["key"]), ()),
                          key=lambda f: (rank.get(_case(f), len(rank)), natural_key(_case(f))))
            for f in mine[limit:] if limit else ():
                f["detailed"] = False
            p["detailed"] = min(len(mine), limit) if limit else len(mine)
            p["left_out"] = len(mine) - p["detailed"]
            left_out += p["left_out"]
    return left_out


def _case(failure: dict) -> str:
    return str(failure.get("case") or failure.get("id") or "?")


def left_out_line(model: dict, quote=str) -> str | None:
    """The line that says which failures a report (:func:`conformance.reporting.report.build`'s
    model) leaves out and how to see them, None when it leaves none out: ``Below, the report of at
    most 3 failures per pattern; 78 more left out (P, out_write_offsets: another value (contract): 78 of
    81). --max-failures-per-group 0 shows every one; the results file holds them all.``
    ``quote`` renders a planner's name and a pattern's words (read from a results file: a code
    span each in Markdown)."""
    if not model.get("left_out"):
        return None
    parts = [f"{quote(g['planner'])}, {quote(p['words'])}: {p['left_out']} of {p['count']}"
             for g in model["failure_groups"] for p in g["patterns"] if p.get("left_out")]
    return (f"Below, the report of at most {counted(model['max_per_group'], 'failure')} per "
            f"pattern; {model['left_out']} more left out ({'; '.join(parts)}). {quote(f'{OPTION} 0')} "
            "shows every one; the results file holds them all.")


def with_limit(model: dict, limit: int) -> dict:
    """A copy of a report's ``model`` (:func:`conformance.reporting.report.build`) whose failures
    are marked ``detailed`` for ``limit`` full reports per group (:func:`limit_details`), its
    ``max_per_group`` and ``left_out`` set to match; ``model`` itself is left as it was. One
    model serves a report and the page ``--publish`` writes beside it, each with its own limit.

    Raises:
        ValueError: ``limit`` is negative.
    """
    failures = [dict(f) for f in model["failures"]]
    found = []
    for group in model["failure_groups"]:  # "listed" holds some of "patterns": copied as one
        copies = {id(p): dict(p) for p in group["patterns"]}
        found.append({**group, "patterns": [copies[id(p)] for p in group["patterns"]],
                      "listed": [copies.get(id(p), p) for p in group.get("listed", ())]})
    left_out = limit_details(failures, found, model["profile"], limit)
    return {**model, "failures": failures, "failure_groups": found, "max_per_group": limit,
            "left_out": left_out}
