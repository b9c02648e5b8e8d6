"""``python -m conformance report``: a results file (and benchmark JSON) as one page.

:func:`load_results` reads and schema-checks a results file written by
:mod:`conformance.plugin.results_writer`; :func:`build` turns it into the page's model (summary per planner,
the cases x planners matrix with failures first, every failure's report and rerun command, the
error catalog x planners, the hazard cases, benchmarks: :mod:`conformance.reporting.bench_section`);
:func:`render_html` (Jinja2 template
``conformance/reporting/templates/report.html.j2``: inline CSS and SVG, a few lines of JavaScript, nothing
fetched), :func:`render_text` (tabulate) and :func:`render_markdown` print it.
"""

from __future__ import annotations

import re
from pathlib import Path

from tabulate import tabulate

from conformance.corpus.corpus_subject import NAME as CORPUS_NAME
from conformance.corpus.corpus_subject import errors as _catalog
from conformance.reporting import bench_section
from conformance.reporting.run_profile import judged_on, profile_fault, run_profile_of
from conformance.corpus.entries import PSEUDO_PLANNERS, SHARED_PLANNERS
from conformance.corpus.case_file import printable
from conformance.corpus.text import kept, natural_key
from conformance.reporting.freshness import stale_reasons, undigested
from conformance.reporting import divergence_profile, error_table, failure_groups, verdict_view
from conformance.reporting.markdown import code_span, fenced, html_text
from conformance.reporting.results_format import BAD, JUDGED, STATUSES, incomplete_reason
from conformance.corpus.corpus_subject import registry as _registry
from conformance.engine.rerun import POISON_SEED_VARIABLE, RERUN_ENVIRONMENT, shell_command

builtin_names = _registry.builtin_names
CATALOG_FILE = _catalog.__name__.replace(".", "/") + ".py"
"""The corpus subject's error catalog, as the page names it (``impls/<subject>/errors.py``)."""


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


def build(doc: dict, bench: Path | None = None, check_stale: bool = True) -> dict:
    """The page's model: fingerprint, summary, matrix, failures, catalog, hazards, benchmarks, and
    why the results are not a whole run of this checkout (``incomplete``: a reason or None,
    from :func:`~conformance.reporting.results_format.incomplete_reason`; ``stale``: a list,
    from :func:`~conformance.reporting.freshness.stale_reasons`, empty without ``check_stale``;
    ``undigested``: the external planners the run recorded no source digest of).

    Raises:
        BenchError: ``bench`` is not a usable pytest-benchmark file.
    """
    # a results file written by hand (or by an older harness) may hold a message of any length:
    # the page keeps what the results writer keeps (README, Limits)
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
    model = {"doc": doc, "fingerprint": doc["fingerprint"], "planners": planners,
             "profile": profile, "profile_fault": profile_fault(doc),
             "judged_on": judged_on(profile, doc["results"]),
             "summary": summary, "statuses": STATUSES, "bad_statuses": sorted(BAD),
             "judged_statuses": list(PASSING_JUDGED),
             "rows": rows, "failures": failures, "failure_groups": failure_groups.groups(
                 results, _order, lambda r: anchor("fail", r["case"] or r["id"], r["planner"]),
                 profile),
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


def warning(model: dict, quote=str) -> str | None:
    """The report's first line when the results are not a whole run of this checkout's code;
    ``quote`` renders each stale reason (it names commits and planners read from the file: a code
    span each in Markdown). The incomplete reason holds only counts and an exit code."""
    parts = []
    if model["incomplete"]:
        parts.append(f"INCOMPLETE RUN: {model['incomplete']}; only what finished is shown")
    if model.get("profile_fault"):
        parts.append(f"PROFILE NOT AS RECORDED: {quote(model['profile_fault'])}; read as "
                     f"--profile {model['profile']}")
    if model["stale"]:
        parts.append(f"STALE RESULTS: {'; '.join(map(quote, model['stale']))}")
    if model.get("undigested"):
        parts.append(f"NO SOURCE DIGEST of {', '.join(map(quote, model['undigested']))}: a change "
                     "to its code since the run cannot be seen")
    held = (model.get("bench") or {}).get("withheld")
    if held:
        parts.append("BENCHMARK FIGURES WITHHELD: " + "; ".join(
            f"{quote(name)}: {quote(why)}" for name, why in held.items()))
    return " | ".join(parts) or None


def run_command(doc: dict) -> str:
    """The command that made the results document ``doc``, safe to paste into a shell: pytest with
    its arguments, after the run's assignments of the variables a rerun needs (only those names:
    the document is untrusted, so any other key is dropped, and values are quoted)."""
    names = (*RERUN_ENVIRONMENT, POISON_SEED_VARIABLE)
    env = doc.get("environment")
    kept_env = {k: v for k, v in env.items() if k in names and isinstance(v, str)} \
        if isinstance(env, dict) else {}
    return shell_command(["pytest", *doc["args"]], kept_env)


def no_error_case_line(catalog: list[dict], quote=str) -> str | None:
    """The line that stands for the documented errors x planners table when no case of the run
    expects an error of the corpus subject's catalog (:data:`CATALOG_FILE`, spec section 4): no
    row of ``catalog`` (:func:`error_table.catalog`) has a case, as in a run of one valid case or
    of another subject; None when one does. ``quote`` renders the catalog's path (a code span in
    Markdown)."""
    if any(row["cases"] for row in catalog):
        return None
    judged = f", so none of its {len(catalog)} ids was judged" if catalog else ""
    return f"No case of this run expected a documented error of {quote(CATALOG_FILE)}{judged}."


def render_html(model: dict) -> str:
    """The self-contained page."""
    from conformance.reporting.html_pages import environment

    env = environment()
    return env.get_template("report.html.j2").render(
        **model, warning=warning(model), command=run_command(model["doc"]),
        subjects=run_subjects(model["doc"]), corpus_subject=CORPUS_NAME,
        catalog_file=CATALOG_FILE, no_error_cases=no_error_case_line(model["catalog"]))


def run_subjects(doc: dict) -> list[str]:
    """The subjects a results document holds results of, in name order (a result without a
    ``subject`` is the corpus subject's; a non-string one, from an untrusted file, is left out)."""
    found = [r.get("subject") or CORPUS_NAME for r in doc.get("results") or ()
             if isinstance(r, dict)]
    return sorted({s for s in found if isinstance(s, str)})


def _summary_table(model: dict, fmt: str) -> str:
    # In Markdown a planner name or mode read from a results file is untrusted: a code span each
    cell = code_span if fmt == "github" else str
    rows = [[cell(s["planner"]), cell(s["mode"]), *[s["counts"][k] for k in STATUSES],
             f"{s['seconds']:.1f}"] for s in model["summary"]]
    return tabulate(rows, headers=["planner", "mode", *STATUSES, "seconds"], tablefmt=fmt)


def _head(model: dict, quote=str) -> str:
    """The line under the title; ``quote`` renders each fingerprint field read from the file
    (:func:`~conformance.reporting.markdown.code_span` in Markdown: a host named
    ``# ALL PASSED`` or ``![x](y)`` stays text)."""
    fp = model["fingerprint"]
    state = "INCOMPLETE" if model["incomplete"] else "complete"
    results = "1 result" if model["total"] == 1 else f"{model['total']} results"
    return (f"{results}, {model['bad']} not passing; run {state}, "
            f"{quote(str(fp['date']))}, commit {quote((fp['commit'] or 'unknown')[:12])}"
            f"{' (dirty)' if fp.get('dirty') else ''}, host {quote(str(fp['host']))}, "
            f"GPU {quote(str(fp['gpu']))}; judged: {model['judged_on']}")


def render_text(model: dict) -> str:
    """The terminal rendering: summary per planner, failures with rerun commands, catalog gaps.
    Control characters a results file holds (an ESC in a hand-edited planner name or message) are
    escaped, never sent to the terminal."""
    out = [line for line in (warning(model),) if line]
    out += [_head(model), "", _summary_table(model, "simple")]
    out += ["", *lines] if (lines := failure_groups.terminal_lines(model["failure_groups"])) else []
    for judged, title in ((False, "not passing:"), (True, "judged, not failed:")):
        listed = [f for f in model["failures"] if f["judged"] == judged]
        if listed:
            out += ["", title]
            out += [f"  {f['status']:<7} {f['id']}: {f['summary']}"
                    + (f" ({f['rules']})" if f["rules"] else "") + f"\n          {f['rerun']}"
                    for f in listed]
    uncovered = [c["id"] for c in model["catalog"] if not c["cases"]]
    none_expected = no_error_case_line(model["catalog"])
    out += ["", none_expected or f"error catalog: {len(model['catalog']) - len(uncovered)} of "
                                 f"{len(model['catalog'])} ids covered by this run's cases"
                                 + (f"; not in this run: {', '.join(uncovered)}" if uncovered
                                    else "")]
    failing = error_table.failing_lines(model["catalog"])
    if failing:
        out += ["documented error steps failed (cases that raised it as documented / judged):"]
        out += [f"  {line}" for line in failing]
    else:
        out += ["documented error steps: none failed"]
    if model["bench"]:
        out += bench_section.text_lines(model["bench"])
    return "\n".join(printable(line) for line in "\n".join(out).split("\n")) + "\n"


def render_markdown(model: dict) -> str:
    """A Markdown summary (for a pull request or a CI job summary): what did not pass first, then
    what was judged and not failed, then the tables (divergence profile, documented errors,
    benchmarks)."""
    title = "## Conformance" + (f": {warning(model, code_span)}" if warning(model) else "")
    out = [title, "", _head(model, code_span), "", f"Run: {code_span(run_command(model['doc']))}",
           "", _summary_table(model, "github")]
    bad = [f for f in model["failures"] if not f["judged"]]
    if bad:
        out += ["", "### Not passing", "", *failure_groups.markdown_lines(model["failure_groups"]),
                ""]
        for f in bad:
            out += [f"<details><summary><b>{f['status']}</b> <code>{html_text(f['id'])}</code>: "
                    f"{html_text(f['summary'])}</summary>", "", fenced(f["message"] or ""), "",
                    f"Rerun: {code_span(f['rerun'])}", "", "</details>", ""]
    judged = [r for r in model["doc"]["results"] if r["status"] in JUDGED]
    if judged:
        out += ["", "### Judged, not failed", "", tabulate(
            [[r["status"], code_span(r["id"]),
              code_span((kept(r["message"]) or "").splitlines()[0]),
              code_span(what_went_wrong(r)),
              code_span(rules) if (rules := verdict_view.rules(r)) else ""]
             for r in judged], headers=["status", "test", "why", "what", "rules"],
            tablefmt="github")]
    out += ["", "### Divergence profile (spec §6)", "",
            divergence_profile.table_or_line(model["divergence"], "github")]
    out += ["", "### Documented errors x planners", ""]
    none_expected = no_error_case_line(model["catalog"], code_span)
    out += [none_expected] if none_expected else [
        "Per planner: cases whose every step expecting the error raised it exactly / cases "
        "judged (a crash, timeout or skip is not judged).", "",
        error_table.render(model["catalog"], model["catalog_planners"], "github")]
    if model["bench"]:
        out += ["", "### Benchmarks", *bench_section.goal_lines(model["bench"], "github")]
    return "\n".join(out).rstrip("\n") + "\n"
