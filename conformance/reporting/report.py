"""``python -m conformance report``: a results file (and benchmark JSON) as one page's model.

A results file is read and schema-checked by
:func:`conformance.reporting.results_format.load_results` (written by
:mod:`conformance.plugin.results_writer`); :func:`build` turns it into the page's model (summary per
planner, the cases x planners matrix with failures first, every failure's report and rerun
command, the error catalog x planners, the hazard cases, benchmarks:
:mod:`conformance.reporting.bench_section`). The lines every rendering shares (the warning, the
run's command) are :mod:`conformance.reporting.report_lines`; the renderings (HTML, text,
Markdown) are :mod:`conformance.reporting.report_render`.
"""

from __future__ import annotations

import re
from pathlib import Path

from conformance.reporting import bench_section
from conformance.reporting.run_profile import judged_on, profile_fault, run_profile_of
from conformance.corpus.entries import PSEUDO_PLANNERS, SHARED_PLANNERS
from conformance.corpus.text import kept, natural_key
from conformance.reporting.freshness import stale_reasons, undigested
from conformance.reporting import divergence_profile, error_table, failure_groups, verdict_view
from conformance.reporting.failure_details import limit_details
from conformance.reporting.results_format import BAD, JUDGED, STATUSES, incomplete_reason
from conformance.corpus.corpus_subject import registry as _registry

builtin_names = _registry.builtin_names


def anchor(*parts: str | None) -> str:
    """An HTML id from ``parts`` (``case-<id>``, ``fail-<case>--<planner>``)."""
    return "--".join(re.sub(r"[^A-Za-z0-9_.-]", "_", p or "none") for p in parts)


def _order(name: str) -> tuple:
    builtin = builtin_names()
    if name in builtin:
        return (0, builtin.index(name), name)
    return (2, PSEUDO_PLANNERS.index(name), name) if name in PSEUDO_PLANNERS else (1, 0, name)



PASSING_JUDGED = tuple(s for s in JUDGED if s not in BAD)
"""Judged, not failed (``differs``, ``not-wrapper``, ``declared``): listed with the failures."""


def first_detail(message: str | None) -> str:
    """The line of a failure report (:class:`conformance.engine.judge.ConformanceFailure` text)
    that says what went wrong, after its header lines; for a wrong error, what was raised. Only
    for a result without a verdict: :func:`what_went_wrong` reads the verdict when it has one."""
    lines = [ln.strip() for ln in (message or "").splitlines() if ln.strip()]
    for i, line in enumerate(lines[2:], 2):
        if line.startswith("wrong error") and i + 2 < len(lines):  # what was raised instead
            return f"wrong error: {lines[i + 2]}"
        if not line.startswith(("run ", "step ", "rerun:")):
            return line
    return lines[0] if lines else ""


def what_went_wrong(result: dict) -> str:
    """A failure's summary line: from its verdict's data
    (:func:`conformance.reporting.verdict_view.summary`), else :func:`first_detail` of its text."""
    return verdict_view.summary(result) or first_detail(result["message"])


def _entry(r: dict, cell: dict, row: dict) -> dict:
    """One entry of the failure list: the result, its summary, its rules and its anchors."""
    return {**r, "message": _without_rerun_line(r["message"], r["rerun"]),
            "anchor": cell["anchor"], "case_anchor": row["anchor"], "summary": cell["note"],
            "more": verdict_view.more(r), "rules": verdict_view.rules(r),
            "judged": r["status"] in PASSING_JUDGED}


def _without_rerun_line(message: str | None, rerun: str) -> str | None:
    """``message`` less its last line when that line is ``  rerun: RERUN`` (the page shows the
    rerun command once, on its own line under the report)."""
    if not message:
        return message
    head, _, last = message.rstrip("\n").rpartition("\n")
    return head if head and last.strip() == f"rerun: {rerun}" else message


def planner_label(result: dict) -> str:
    """A result's planner as the page names it: ``triton`` for the corpus engine's subject,
    ``triton (NAME)`` for a one-call subject NAME's (its ``subject`` field), so that no
    table adds two subjects' counts under one name."""
    subject = result.get("subject")
    return f"{result['planner']} ({subject})" if subject else result["planner"]


def build(doc: dict, bench: Path | None = None, check_stale: bool = True,
          max_per_group: int = 0) -> dict:
    """The page's model: fingerprint, summary, matrix, failures, catalog, hazards, benchmarks, and
    why the results are not a whole run of this checkout (``incomplete``: a reason or None,
    from :func:`~conformance.reporting.results_format.incomplete_reason`; ``stale``: a list,
    from :func:`~conformance.reporting.freshness.stale_reasons`, empty without ``check_stale``;
    ``undigested``: the external planners the run recorded no source digest of). Each failure is
    marked ``detailed`` when the renderings show its full report: at most ``max_per_group`` of each
    failure group, every one when it is 0, the default (:func:`~conformance.reporting.failure_details.
    limit_details`); ``left_out`` counts the others, ``max_per_group`` is kept.

    Raises:
        BenchError: ``bench`` is not a usable pytest-benchmark file.
        ValueError: ``max_per_group`` is negative.
    """
    # a results file written by hand (or by an older harness) may hold a message of any length:
    # the page keeps what the results writer keeps (docs/robustness.md, Limits)
    results = [{**r, "message": kept(r["message"]), "planner": planner_label(r)}
               for r in doc["results"]]
    modes = {n: p["mode"] or "unavailable" for n, p in doc["fingerprint"]["planners"].items()}
    modes.update({planner_label(r): modes.get(r["planner"], "-") for r in doc["results"]
                  if r.get("subject")})
    planners = sorted({r["planner"] for r in results}, key=_order)
    summary = []
    for p in planners:
        mine = [r for r in results if r["planner"] == p]
        counts = {s: sum(r["status"] == s for r in mine) for s in STATUSES}
        summary.append({"planner": p, "mode": "shared" if p in SHARED_PLANNERS.values()
                        else modes.get(p, "-"),
                        "counts": counts, "seconds": sum(r["duration"] for r in mine)})
    cases: dict[str, dict] = {}
    failures = []
    for r in results:
        key = r["case"] or r["id"]
        row = cases.setdefault(key, {"case": key, "anchor": anchor("case", key), "cells": {},
                                     "description": r.get("description") or "",
                                     "tags": r["tags"], "file": r.get("file"),
                                     "json_path": r.get("json_path"), "source": r["source"]})
        cell = {"status": r["status"], "id": r["id"], "rerun": r["rerun"],
                "anchor": anchor("fail", key, r["planner"]), "note": ""}
        if r["status"] in BAD or r["status"] in PASSING_JUDGED:
            cell["note"] = what_went_wrong(r)
            failures.append(_entry(r, cell, row))
        elif r["status"] in ("xfail", "skip"):
            cell["note"] = r["message"] or ""
        row["cells"][r["planner"]] = cell
    for row in cases.values():
        statuses = [c["status"] for c in row["cells"].values()]
        row["rank"] = min(STATUSES.index(s) for s in statuses)
        row["statuses"] = " ".join(sorted(set(statuses)))
    rows = sorted(cases.values(), key=lambda r: (r["rank"], r["file"] or "",
                                                 natural_key(r["json_path"]), r["case"]))
    failures.sort(key=lambda f: (f["judged"], _order(f["planner"]), f["file"] or "",
                                 natural_key(f["json_path"])))
    profile = run_profile_of(doc)
    found = failure_groups.groups(
        results, _order, lambda r: anchor("fail", r["case"] or r["id"], r["planner"]), profile)
    left_out = limit_details(failures, found, profile, max_per_group)
    model = {"doc": doc, "fingerprint": doc["fingerprint"], "planners": planners,
             "profile": profile, "profile_fault": profile_fault(doc),
             "judged_on": judged_on(profile, doc["results"]),
             "summary": summary, "statuses": STATUSES, "bad_statuses": sorted(BAD),
             "judged_statuses": list(PASSING_JUDGED),
             "rows": rows, "failures": failures, "failure_groups": found,
             "max_per_group": max_per_group, "left_out": left_out,
             "tags": sorted({t for r in results for t in r["tags"]}),
             "catalog": (catalog := error_table.catalog(results, planners)),
             "catalog_planners": error_table.columns(catalog, planners),
             "hazards": (hazards := [r for r in rows if "hazard" in r["tags"]]),
             "hazard_planners": error_table.columns(hazards, planners),
             "divergence": divergence_profile.profile(
                 [r for r in results if r.get("out_of_contract") is not None]),
             "total": len(results), "bad": sum(r["status"] in BAD for r in results),
             "judged": sum(r["status"] in PASSING_JUDGED for r in results)}
    model.update(bench_section.section(bench, doc), incomplete=incomplete_reason(doc),
                 stale=stale_reasons(doc) if check_stale else [], undigested=undigested(doc))
    return model
