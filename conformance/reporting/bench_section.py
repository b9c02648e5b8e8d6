"""The benchmark section of ``python -m conformance report --bench BENCH_JSON``
(:mod:`conformance.reporting.report`): its model, the suite's goal table and the text table.

The figures and goal records come from :func:`conformance.reporting.bench_figures.load_bench`
(checked there: a file it refuses is never shown); every cell read from the file is a code span in
Markdown (:func:`~conformance.reporting.markdown.code_span`), and the text rendering's caller
escapes control characters.
"""

from __future__ import annotations

from pathlib import Path

from tabulate import tabulate

from conformance.reporting import bench_figures, bench_repeats
from conformance.reporting.markdown import code_span


def section(path: Path | None) -> dict:
    """``{"bench": None}`` without a file, else ``{"bench": {...}}``: ``file``, ``info`` (the
    machine and commit fields), ``table`` (:func:`~conformance.reporting.bench_figures.table`),
    ``plots`` (``(mode, svg)`` pairs), ``goals`` (each record with its ``measured`` cell),
    ``repeats`` and ``judged_on`` (the line above the goal table).

    Raises:
        BenchError: ``path`` is not a usable pytest-benchmark file.
    """
    if path is None:
        return {"bench": None}
    rows, info = bench_figures.load_bench(path)
    goals = [dict(g, measured=bench_figures.goal_cell(g)) for g in info["goals"] or []]
    return {"bench": {"file": str(path), "info": info, "table": bench_figures.table(rows),
                      "plots": bench_figures.plots(rows), "goals": goals,
                      "repeats": info["repeats"],
                      "judged_on": bench_repeats.judged_on(info["repeats"])}}


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
