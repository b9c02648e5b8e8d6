"""The report's model (:func:`conformance.reporting.report.build`) rendered: as one self-contained
page (:func:`render_html`, the Jinja2 template ``conformance/reporting/templates/report.html.j2``:
inline CSS and SVG, a few lines of JavaScript, nothing fetched), for a terminal
(:func:`render_text`, tabulate; control characters escaped) or as Markdown for a pull request or a
CI job summary (:func:`render_markdown`; what a results file holds as code spans).
"""

from __future__ import annotations

import textwrap

from tabulate import tabulate

from conformance.corpus.case_file import printable
from conformance.corpus.corpus_subject import NAME as CORPUS_NAME
from conformance.corpus.text import kept
from conformance.reporting import bench_section, divergence_profile, error_table, failure_groups
from conformance.reporting import verdict_view
from conformance.reporting.failure_details import left_out_line
from conformance.reporting.markdown import code_span, fenced, html_text
from conformance.reporting.report import what_went_wrong
from conformance.reporting.report_lines import (CATALOG_FILE, no_error_case_line, run_command,
                                                run_subjects, warning)
from conformance.reporting.results_format import JUDGED, STATUSES


def render_html(model: dict) -> str:
    """The self-contained page."""
    from conformance.reporting.html_pages import environment

    env = environment()
    return env.get_template("report.html.j2").render(
        **model, warning=warning(model), command=run_command(model["doc"]),
        subjects=run_subjects(model["doc"]), corpus_subject=CORPUS_NAME,
        catalog_file=CATALOG_FILE, no_error_cases=no_error_case_line(model["catalog"]),
        left_out_line=left_out_line(model))


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
        listed = [f for f in model["failures"] if f["judged"] == judged and f["detailed"]]
        if listed:
            out += ["", title]
            out += [f"  {f['status']:<7} {f['id']}: {f['summary']}"
                    + (f" ({f['rules']})" if f["rules"] else "") + f"\n          {f['rerun']}"
                    for f in listed]
        if not judged and (left_out := left_out_line(model)):
            out += [f"  {line}" for line in textwrap.wrap(left_out, 118, break_long_words=False,
                                                         break_on_hyphens=False)]
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
        left_out = left_out_line(model, code_span)
        out += [left_out, ""] if left_out else []
        for f in (f for f in bad if f["detailed"]):
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
