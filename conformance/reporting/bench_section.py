"""The benchmark section of ``python -m conformance report --bench BENCH_JSON``
(:mod:`conformance.reporting.report`): its model, the suite's goal table and the text table.

The figures and goal records come from :func:`conformance.reporting.bench_figures.load_bench`
(checked there: a file it refuses is never shown); every cell read from the file is a code span in
Markdown (:func:`~conformance.reporting.markdown.code_span`), and the text rendering's caller
escapes control characters.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from tabulate import tabulate

from conformance.reporting import bench_figures, bench_plots, bench_repeats, corpus_coverage
from conformance.reporting.code_changes import code_difference
from conformance.reporting.markdown import code_span
from conformance.reporting.results_format import BAD


def section(path: Path | None, judged: dict | None = None) -> dict:
    """``{"bench": None}`` without a file, else ``{"bench": {...}}``: ``file``, ``info`` (the
    machine and commit fields), ``table`` (:func:`~conformance.reporting.bench_figures.table`),
    ``plots`` (``(mode, svg)`` pairs), ``goals`` (each record with its ``measured`` cell),
    ``repeats``, ``judged_on`` (the line above the goal table) and ``withheld``.

    ``judged`` is the results file the page reports (its fingerprint and results): a planner it
    judged whose figures cannot stand beside its verdicts is ``withheld`` (:func:`withheld`):
    its rows read ``withheld: REASON`` in place of a figure, and so does a goal measured on it.

    Raises:
        BenchError: ``path`` is not a usable pytest-benchmark file.
    """
    if path is None:
        return {"bench": None}
    rows, info = bench_figures.load_bench(path)
    held = withheld(info["sources"], {r.planner for r in rows if not r.floor}, judged)
    rows = [replace(r, refused=f"withheld: {held[r.planner]}") if r.planner in held else r
            for r in rows]
    goals = [dict(g, measured=bench_figures.goal_cell(g)) for g in info["goals"] or []]
    for g in goals:
        named = _withheld_in_goal(g, held)
        if named:
            g["measured"] = "withheld"
            g["verdict"] = f"withheld: {named[0]} {held[named[0]]}"
    return {"bench": {"file": str(path), "info": info, "table": bench_figures.table(rows),
                      "plots": bench_plots.plots(rows), "goals": goals,
                      "repeats": info["repeats"], "withheld": held,
                      "judged_on": bench_repeats.judged_on(info["repeats"])}}


def _withheld_in_goal(goal: dict, held: dict[str, str]) -> list[str]:
    """The withheld planners among those ``goal`` was judged on: its ``planners`` (every planner
    with a figure in it, :data:`conformance.reporting.goal_records.GOAL_FIELDS`), or for a file
    written before the suite recorded them, the planner its ``where`` names. A goal judged on a
    withheld planner's figures shows neither its worst figure nor its verdict: a ``met`` would
    vouch for that planner too, even where another planner's figure is the worst."""
    if goal.get("planners") is not None:
        return [p for p in goal["planners"] if p in held]
    return [p for p in held if goal.get("where") and p in str(goal["where"]).split()]


def withheld(bench_sources: dict[str, dict | None], benched: set[str],
             judged: dict | None) -> dict[str, str]:
    """{planner: why its figures are not shown}, for each planner of the bench, the first of:

    * the results ``judged`` did not run it (its outputs were judged only on the bench's own
      workload);
    * the bench ran other code (its recorded source digest, the file's and its local imports',
      differs from the run's, or one of them recorded none);
    * the run judged some of its cases not passing (a status of ``results_format.BAD``: a figure
      from a planner whose outputs are wrong is not published);
    * a declaration the corpus does not make excused some of its corpus cases (``declared`` by a
      ``--manifest`` of the runner's, :func:`conformance.reporting.corpus_coverage.undeclared`):
      those are failures too;
    * the run did not judge it on every launcher case of the harness's own corpus
      (:func:`conformance.reporting.corpus_coverage.gap`): a run of one case (``--case``) or of
      an entrant's own folder (``--cases DIR``) has no failing case either.

    ``judged`` None (no results file): nothing withheld."""
    if judged is None:
        return {}
    sources = {n: p.get("source") for n, p in judged["fingerprint"]["planners"].items()}
    failing: dict[str, int] = {}
    for r in judged["results"]:
        if r["status"] in BAD and not r.get("subject"):
            failing[r["planner"]] = failing.get(r["planner"], 0) + 1
    out = {planner: "not judged by this run: a figure stands beside no verdict of it"
           for planner in benched - set(sources)}
    for planner in sorted(benched & set(sources)):
        other = code_difference(bench_sources.get(planner), sources[planner])
        if other:
            out[planner] = f"the benchmark ran other code than this run judged ({other})"
        elif failing.get(planner):
            out[planner] = (f"{failing[planner]} case(s) not passing in this run: a wrong "
                            "planner's figures are not published")
        elif excused := corpus_coverage.undeclared(judged["results"], planner, sources[planner]):
            named = ", ".join(excused[:corpus_coverage.NAMED])
            more = len(excused) - corpus_coverage.NAMED
            out[planner] = (f"{len(excused)} corpus case(s) not passing that the corpus "
                            f"declares for no such planner (a --manifest of the runner's, say: "
                            f"{named}{f' and {more} more' if more > 0 else ''}): a wrong "
                            "planner's figures are not published")
        else:
            narrow = corpus_coverage.gap(judged["results"], planner)
            if narrow:
                out[planner] = narrow
    return dict(sorted(out.items()))


def goal_lines(bench: dict, fmt: str) -> list[str]:
    """The suite's goal table (``conformance_goals`` of the file) under its judged-on line; a line
    saying so for a file written before the suite recorded its goals. ``fmt``: tabulate's
    ``"github"`` (Markdown: every cell a code span) or ``"simple"``."""
    if not bench["goals"]:
        return ["", "serving goals: none recorded in this benchmark file"]
    cell = code_span if fmt == "github" else str
    rows = [[cell(g["goal"]), cell(g["target"]), cell(g["measured"]), cell(g["verdict"])]
            for g in bench["goals"]]
    return ["", f"serving goals, {bench['judged_on']}", "",
            tabulate(rows, headers=["goal", "target", "worst measured", "verdict"], tablefmt=fmt,
                     disable_numparse=True)]


def text_lines(bench: dict) -> list[str]:
    """The goal table, then one row per figure (planner, mode, scenario, bs, p50 us, IQR,
    rounds, vs floor; with repeats also the p50 range and the repeats) for the terminal."""
    many = bench["repeats"] > 1
    rows = [[b["planner"], b["mode"], b["scenario"], b["bs"], b["p50"], b["iqr"], b["rounds"],
             b["ratio"], *([b["spread"], b["repeats"]] if many else [])]
            for b in bench["table"]]
    return [*goal_lines(bench, "simple"),
            "", tabulate(rows, headers=["planner", "mode", "scenario", "bs", "p50 us", "IQR",
                                        "rounds", "vs floor",
                                        *(["p50 range", "repeats"] if many else [])],
                         tablefmt="simple", disable_numparse=True)]
