"""Benchmark figures for the report: read a pytest-benchmark JSON file and tabulate it (the plots
are :mod:`conformance.reporting.bench_plots`').

Ratios are the suite's own (``extra_info`` of each entry, written by
:func:`conformance.bench.summary_table.annotate`): the report shows them, it never recomputes one.
A benchmark's planner, mode and batch size come from its ``params`` (``planner``, ``mode``,
``bs``), else its ``extra_info``, else the group (mode) and the ``[planner-bs]`` suffix of its
name. A benchmark is a **floor** (an empty kernel, a trivial torch op) when ``extra_info.floor``
is set (its value, if a string, names it), or, in a file that names no planner, its name's
planner part starts with ``floor`` (a planner named ``floorwax:launch`` is a planner: its figures
are withheld beside failing verdicts as any planner's). Times are
pytest-benchmark's seconds, shown in microseconds: p50 (median), min, q1, q3. A varying-bs figure
shows its bs as the range it streamed (``1..4096``, from ``extra_info.bs_range``), never one bs.
A file of several repeats (``bench --repeat N``) reads as one row per figure, the median of the
repeats with their p50s kept (:mod:`conformance.reporting.bench_repeats`: a figure with two entries
of one repeat is refused with the file, repeats that are copies of one measurement are refused),
and its goal records (``conformance_goals``, written by the suite) are shown once each is checked
against its own median and target and the file's repeats
(:mod:`conformance.reporting.goal_records`): a record they contradict refuses the file.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from pathlib import Path

from conformance.reporting import bench_repeats
from conformance.reporting.file_text import read_file_text
from conformance.reporting.goal_records import GOAL_FIELDS, GOALS_KEY, GoalRecordError, goal_cell
from conformance.reporting.goal_records import goal_records

__all__ = ["GOAL_FIELDS", "GOALS_KEY", "REFUSED", "BenchError", "BenchRow", "format_ratio",
           "goal_cell", "goal_records", "load_bench", "ratio_text", "table"]
"""The goal-record names are :mod:`conformance.reporting.goal_records`', kept here for their
callers (``conformance.bench.goals`` reads :func:`goal_cell` from this module)."""

REFUSED = "refused"
"""``extra_info`` key of a benchmark whose figure the suite refused; its value is the reason
(:mod:`conformance.bench.refusal`). Such a row shows ``refused: <reason>``, never a number."""


class BenchError(ValueError):
    """A file that is not pytest-benchmark JSON; the message names the file."""


@dataclass(frozen=True)
class BenchRow:
    """One benchmark, times in microseconds."""

    key: str
    planner: str
    mode: str
    bs: int | None
    p50: float
    min: float
    q1: float
    q3: float
    rounds: int
    floor: bool
    scenario: str | None = None
    ratio_to_floor: float | None = None
    floor_name: str | None = None
    ratio_to_chain: float | None = None
    refused: str | None = None
    bs_range: tuple[int, int] | None = None
    repeat_p50s: tuple[float, ...] = ()
    """The p50 of each repeat, us, sorted (empty for a figure of one repeat): what
    :func:`conformance.reporting.bench_repeats.merge` wrote, never a file's own."""

    @property
    def repeats(self) -> int:
        """Repeats behind this row (1 without ``--repeat``)."""
        return max(1, len(self.repeat_p50s))

    @property
    def iqr(self) -> float:
        """q3 - q1, us."""
        return self.q3 - self.q1

    @property
    def bs_label(self) -> str:
        """The bs a figure measured: ``1..4096`` for a varying-bs stream (``extra_info.bs_range``,
        else 1..bs), the bs otherwise, ``-`` for none."""
        if self.scenario == "varying-bs" and (self.bs_range or self.bs is not None):
            lo, hi = self.bs_range or (1, self.bs)
            return f"{lo}..{hi}"
        return "-" if self.bs is None else str(self.bs)


def _param(bench: dict, name: str):
    for source in (bench.get("params") or {}, bench.get("extra_info") or {}):
        if source.get(name) is not None:
            return source[name]
    return None


def _row(bench: dict) -> BenchRow:
    stats, extra = bench["stats"], bench.get("extra_info") or {}
    name = bench.get("name", "?")
    suffix = re.search(r"\[(.*)\]$", name)
    parts = suffix.group(1).split("-") if suffix else []
    planner = named = _param(bench, "planner")
    bs = _param(bench, "bs")
    if bs is None and parts and parts[-1].isdigit():
        bs = int(parts[-1])
    if planner is None:
        planner = "-".join(parts[:-1] if parts and parts[-1].isdigit() else parts) or name
    # a planner the entry names is never a floor, whatever its name ("floorwax:launch")
    floor = bool(extra.get("floor")) or (named is None and str(planner).startswith("floor"))
    if isinstance(extra.get("floor"), str):
        planner = extra["floor"]
    mode = _param(bench, "mode") or bench.get("group") or "default"
    scenario = _param(bench, "scenario")
    us = 1e6
    if extra.get(REFUSED):  # its statistics are None: no figure to read
        stats = {k: 0.0 for k in ("median", "min", "q1", "q3")}
    return BenchRow(key=bench.get("fullname") or name, planner=str(planner), mode=str(mode),
                    bs=None if bs is None else int(bs), p50=stats["median"] * us,
                    min=stats["min"] * us, q1=stats["q1"] * us, q3=stats["q3"] * us,
                    rounds=int(stats.get("rounds", 0)), floor=floor,
                    scenario=None if scenario is None else str(scenario),
                    ratio_to_floor=extra.get("ratio_to_floor"), floor_name=extra.get("floor_name"),
                    ratio_to_chain=extra.get("ratio_to_chain"),
                    refused=None if not extra.get(REFUSED) else str(extra[REFUSED]),
                    bs_range=_bs_range(extra), repeat_p50s=_repeat_p50s(extra))


def _repeat_p50s(extra: dict) -> tuple[float, ...]:
    values = extra.get("repeat_p50_us")
    if isinstance(values, list) and all(isinstance(v, (int, float)) and not isinstance(v, bool)
                                        and math.isfinite(v) for v in values):
        return tuple(sorted(float(v) for v in values))
    return ()


def _bs_range(extra: dict) -> tuple[int, int] | None:
    span = extra.get("bs_range")
    if isinstance(span, (list, tuple)) and len(span) == 2 and all(isinstance(v, int) for v in span):
        return int(span[0]), int(span[1])
    return None


def load_bench(path: Path) -> tuple[list[BenchRow], dict]:
    """The benchmarks of a pytest-benchmark JSON file (one row per figure: repeats merged) and its
    machine/commit info, with ``repeats`` (the most any figure has) and ``goals`` (the suite's
    goal records, :func:`goal_records`; None in a file written before them).

    Raises:
        BenchError: unreadable, not pytest-benchmark's format, no benchmarks, a figure with two
            entries of one repeat (:func:`~conformance.reporting.bench_repeats.checked`), a median
            that is not a positive finite time (zero, negative, NaN), or goal records of another
            shape or that their medians, targets or the file's repeats contradict
            (:func:`~conformance.reporting.goal_records.goal_records`).
    """
    try:
        doc = json.loads(read_file_text(path))
        benches = bench_repeats.checked(doc["benchmarks"])
        rows = [_row(b) for b in bench_repeats.merge(benches)]
        repeats = bench_repeats.repeats(benches)
    except bench_repeats.RepeatsError as exc:
        raise BenchError(f"{path}: {exc}: not one run's benchmark file") from exc
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise BenchError(f"{path}: not a pytest-benchmark JSON file ({type(exc).__name__}: "
                         f"{exc})") from exc
    unusable = [r for r in rows if not r.refused and not (math.isfinite(r.p50) and r.p50 > 0)]
    if unusable or not rows:
        what = f"{len(unusable)} of {len(rows)} medians are zero, negative or NaN (first: " \
               f"{unusable[0].key}: {unusable[0].p50 / 1e6!r} s)" if unusable else "no benchmarks"
        raise BenchError(f"{path}: {what}: not a usable measurement")
    try:
        goals = goal_records(path, doc)
    except GoalRecordError as exc:
        raise BenchError(str(exc)) from exc
    info = {"datetime": doc.get("datetime"), "version": doc.get("version"), "repeats": repeats,
            "goals": goals, "sources": bench_sources(doc)}
    for section in ("machine_info", "commit_info"):
        for k, v in (doc.get(section) or {}).items():
            if isinstance(v, (str, int, float, bool)) and k not in info:
                info[k] = v
    return rows, info


def bench_sources(doc: dict) -> dict[str, dict | None]:
    """{planner: its recorded source digest} as the bench's fingerprint recorded it
    (``machine_info.planners[NAME].source``: ``sha256`` and ``imports``; None where it recorded
    none)."""
    planners = (doc.get("machine_info") or {}).get("planners")
    if not isinstance(planners, dict):
        return {}
    out = {}
    for name, entry in planners.items():
        source = entry.get("source") if isinstance(entry, dict) else None
        out[str(name)] = source if isinstance(source, dict) else None
    return out


def format_ratio(value: float | None) -> str:
    """A ratio with three significant digits (0.00123, 0.457, 12.3, 8562), ``-`` for none: the
    one format of the terminal table and the report."""
    if value is None:
        return "-"
    return f"{value:.0f}" if value >= 1000 else f"{value:.3g}"


def ratio_text(row: BenchRow) -> str:
    """The report's "vs floor" cell: the ratio the suite computed (``extra_info.ratio_to_floor``)
    and the floor it names, e.g. ``1.23x empty-triton (eager)``; empty where none was computed."""
    if row.ratio_to_floor is None:
        return ""
    return f"{format_ratio(row.ratio_to_floor)}x {row.floor_name}"


def table(rows: list[BenchRow]) -> list[dict]:
    """Rows for the report's table: planner, mode, scenario, bs, p50 (with repeats the median of
    theirs, ``spread`` their range, ``repeats`` how many), min, IQR, rounds and the suite's own
    ratios to the empty floor and to the chain floor (never recomputed here)."""
    out = []
    for r in sorted(rows, key=lambda r: (r.mode, r.floor, r.planner, r.scenario or "", r.bs or 0)):
        if r.refused:
            out.append({"key": r.key, "planner": r.planner, "mode": r.mode,
                        "scenario": r.scenario or "-", "bs": r.bs_label,
                        "p50": r.refused if r.refused.startswith("withheld: ")
                        else f"refused: {r.refused}", "min": "-", "iqr": "-",
                        "spread": "-", "repeats": r.repeats, "rounds": r.rounds,
                        "floor": r.floor, "ratio": "", "chain": ""})
            continue
        out.append({"key": r.key, "planner": r.planner, "mode": r.mode,
                    "scenario": r.scenario or "-", "bs": r.bs_label,
                    "p50": f"{r.p50:.2f}", "min": f"{r.min:.2f}", "iqr": f"{r.iqr:.2f}",
                    "spread": bench_repeats.spread_text(list(r.repeat_p50s)),
                    "repeats": r.repeats,
                    "rounds": r.rounds, "floor": r.floor, "ratio": ratio_text(r),
                    "chain": "" if r.ratio_to_chain is None
                    else f"{format_ratio(r.ratio_to_chain)}x"})
    return out
