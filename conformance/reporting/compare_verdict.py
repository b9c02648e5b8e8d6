"""What a comparison of two runs (:func:`conformance.reporting.compare.compare`'s model) comes to:
its one-line headline (:func:`headline`), the count of regressions (:func:`regressions`: newly
failing and disappeared items, each incomplete side, benchmark figures refused or missing in NEW),
and why ``report --compare --fail-on-regression`` fails (:func:`gate`). Runs of different
planners are said so (:func:`planner_line`, :func:`not_compared`), and a comparison in which no
planner ran on both sides never reads "no regressions" (:func:`nothing_compared`).
"""

from __future__ import annotations

from conformance.reporting import compare_bench
from conformance.reporting.compare_bench import bench_line


def _different_sets(model: dict) -> dict | None:
    """The model's ``planner_sets`` when a planner of one side has no counterpart on the other,
    else None."""
    sets = model.get("planner_sets")
    return sets if sets and (sets["only_old"] or sets["only_new"]) else None


def planner_line(model: dict) -> str:
    """One line when the two runs ran different planners (empty when they ran the same)."""
    sets = _different_sets(model)
    if sets is None:
        return ""
    only = "; ".join(f"only in {side}: {', '.join(sets[key])}" for side, key in
                     (("OLD", "only_old"), ("NEW", "only_new")) if sets[key])
    on = f"the {len(sets['compared'])} planner(s) both ran ({', '.join(sets['compared'])})" \
        if sets["compared"] else "no planner (only the shared validator/allocator rows)"
    return (f"the runs ran different planners ({only}): compared on {on}, "
            f"{sets['left_out']} item(s) of the others left out")


def not_compared(model: dict, quote=str) -> str:
    """The headline's first part when a planner of one side has no counterpart on the other:
    ``not compared: OLD ran A only, NEW ran B only``, with the count of NEW's items of those
    planners that do not pass (empty when both ran the same planners)."""
    sets = _different_sets(model)
    if sets is None:
        return ""
    sides = ", ".join(f"{side} ran {', '.join(map(quote, sets[key]))} only" for side, key in
                      (("OLD", "only_old"), ("NEW", "only_new")) if sets[key])
    bad = f" ({sets['new_only_bad']} of NEW's items of those not passing, with no baseline)" \
        if sets["new_only_bad"] else ""
    return f"not compared: {sides}{bad}"


def nothing_compared(model: dict) -> bool:
    """Both sides hold results and no planner (the shared pseudo planners aside) ran on both."""
    sets = model.get("planner_sets")
    return bool(model["has_results"] and sets is not None and not sets["compared"])


SECTIONS = (("newly_failing", "Newly failing"), ("newly_passing", "Newly passing"),
            ("other_changes", "Other status changes"), ("appeared", "Appeared"),
            ("disappeared", "Disappeared"))


REGRESSIONS = ("newly_failing", "disappeared")
"""The sections whose items are regressions (an incomplete side is one too)."""


def regressions(model: dict) -> int:
    """Newly failing and disappeared items, plus one per incomplete side, plus the benchmark
    figures refused in NEW (not in OLD) or missing from NEW
    (:func:`~conformance.reporting.compare_bench.regressions`)."""
    found = sum(len(model[k]) for k in REGRESSIONS) if model["has_results"] else 0
    return found + len(model["incomplete"]) + compare_bench.regressions(model)


def gate(model: dict) -> list[str]:
    """Why ``--fail-on-regression`` fails (empty: it passes): any regression
    (:func:`regressions`); no planner compared (the shared pseudo planners aside: a gate that
    compared nothing cannot pass); NEW's items of a planner OLD did not run that do not pass
    (failures with no baseline are never taken for "not a regression")."""
    why = []
    if model.get("weaker_profile"):
        why.append(model["weaker_profile"])
    if regressions(model):
        why.append(f"{regressions(model)} regression(s)")
    if nothing_compared(model):
        why.append("no planner compared")
    if model.get("planner_sets") and model["planner_sets"]["new_only_bad"]:
        why.append(f"{model['planner_sets']['new_only_bad']} item(s) not passing of a planner "
                   "only NEW ran (no baseline)")
    return why


def headline(model: dict, quote=str) -> str:
    """One line: the planners only one side ran (:func:`not_compared`), then the regressions (or
    "no regressions", or "NO PLANNER COMPARED" when no planner ran on both sides), then the count
    of each other kind of change; ``quote`` renders the planner names read from the files (a code
    span each in Markdown)."""
    titles = dict(SECTIONS)
    bad = [f"{side} run INCOMPLETE ({reason})" for side, reason in model["incomplete"].items()]
    if model["has_results"]:
        bad += [f"{len(model[k])} {titles[k].lower()}" for k in REGRESSIONS]
    bad += compare_bench.regression_parts(model)
    count = regressions(model)
    if count:
        lead = f"{count} regression(s): {', '.join(bad)}"
    elif nothing_compared(model):  # never "no regressions" of runs that share no planner
        lead = f"NO PLANNER COMPARED: regressions cannot be told ({', '.join(bad)})"
    else:
        lead = f"no regressions ({', '.join(bad)})" if bad else ""
    parts = [not_compared(model, quote), lead] if not_compared(model) else [lead]
    parts.insert(0, model.get("weaker_profile") or "")
    lead = "; ".join(p for p in parts if p)
    parts = []
    if model["has_results"]:
        parts += [f"{len(model[k])} {title.lower()}" for k, title in SECTIONS
                  if k not in REGRESSIONS]
        parts.append(f"{model['unchanged']} unchanged")
    if model["bench"] is not None:
        parts.append(bench_line(model))
    if model.get("changed_code"):
        parts.append(f"planner code changed: {', '.join(map(quote, model['changed_code']))}")
    if model.get("undigested"):
        parts.append(f"no source digest of {', '.join(map(quote, model['undigested']))}: "
                     "whether its code changed cannot be seen")
    return "; ".join(p for p in (lead, ", ".join(parts)) if p)
