"""A comparison of two runs (:func:`conformance.reporting.compare.compare`'s model) rendered: as
Markdown for a pull-request comment or as plain text (:func:`render_markdown`, at most
:data:`MAX_ROWS` rows a section), or as one self-contained HTML page (:func:`render_html`,
``templates/compare.html.j2``). Names and messages read from the two files are untrusted: code
spans in Markdown, control characters escaped in text, escaped by Jinja2 in HTML.
"""

from __future__ import annotations

from tabulate import tabulate

from conformance.corpus.case_file import printable
from conformance.reporting import compare_bench
from conformance.reporting.compare_verdict import SECTIONS, headline, planner_line
from conformance.reporting.markdown import code_span, fenced, html_text

MAX_ROWS = 60
"""Rows per section in Markdown and text (a pull-request comment has a size limit)."""


def _rows(entries: list[dict], fmt: str) -> list[list]:
    if fmt == "github":  # untrusted text as code spans: never Markdown of its own
        return [[code_span(e["id"]), f"{e['old_status']} -> {e['status']}" if "old_status" in e
                 else e["status"], code_span(e["detail"][:160]) if e["detail"] else ""]
                for e in entries[:MAX_ROWS]]
    return [[e["id"], f"{e['old_status']} -> {e['status']}" if "old_status" in e
             else e["status"], e["detail"][:160]] for e in entries[:MAX_ROWS]]


def render_markdown(model: dict, fmt: str = "github") -> str:
    """Markdown (``fmt="github"``, for a pull-request comment) or plain text (``"simple"``).
    In plain text the control characters of names and messages from the two files are escaped,
    never sent to the terminal."""
    md = fmt == "github"
    quote = code_span if md else str
    sides = f"{quote(model['old'])} -> {quote(model['new'])}"
    if model["incomplete"]:
        sides += f" ({' and '.join(model['incomplete'])} INCOMPLETE)"
    out = [f"{'## ' if md else ''}Conformance: {sides}", "",
           headline(model, quote) or "nothing to compare"]
    if planner_line(model):
        out += ["", planner_line(model)]
    for key, title in SECTIONS if model["has_results"] else ():
        entries = model[key]
        if not entries:
            continue
        out += ["", f"{'### ' if md else ''}{title} ({len(entries)})", "",
                tabulate(_rows(entries, fmt), headers=["test", "status", "detail"], tablefmt=fmt)]
        if len(entries) > MAX_ROWS:
            out.append(f"... and {len(entries) - MAX_ROWS} more")
        if key == "newly_failing" and md:
            for e in entries[:10]:
                out += ["", f"<details><summary><code>{html_text(e['id'])}</code></summary>",
                        "", fenced(e["message"] or ""), "", "</details>"]
    if model["bench"] is not None:
        out += compare_bench.render(model, fmt, quote)
    text = "\n".join(out)
    return (text if md else "\n".join(printable(line) for line in text.split("\n"))) + "\n"


def render_html(model: dict) -> str:
    """The comparison as one self-contained page."""
    from conformance.reporting.html_pages import environment

    env = environment()
    return env.get_template("compare.html.j2").render(sections=SECTIONS, headline=headline(model),
                                                      planners=planner_line(model),
                                                      lookup=model, **model)
