"""The benchmark part of ``report --compare OLD NEW`` (:mod:`conformance.reporting.compare`).

Figures (:class:`~conformance.reporting.bench_figures.BenchRow`, repeats merged) are matched by
key (the test id less its repeat suffix). A pair with neither side refused is judged for a move
(:mod:`conformance.reporting.bench_noise`); every other figure is named, never dropped in silence:

* **refused**: in both files, refused on either side (its reason shown): refused in NEW and not in
  OLD is a regression (a planner caught in one repeat of NEW gets no figure to compare, which must
  not read as "no regression");
* **only in OLD**: a regression, as a disappeared test is (a NEW run that leaves out a slow figure,
  another ``--bs`` say, would otherwise hide its move);
* **only in NEW**: named, not a regression.

Every cell read from the files (planner, mode, scenario, reasons, keys) is untrusted: in Markdown
a code span each (:func:`~conformance.reporting.markdown.code_span`; ``-`` where a file gives
none), bs is built from integers only (``BenchRow.bs_label``), times and counts are formatted
numbers; text escapes control characters (the caller's ``printable``), HTML autoescapes.
"""

from __future__ import annotations

from tabulate import tabulate

from conformance.reporting import bench_noise
from conformance.reporting.bench_figures import BenchRow

MAX_ROWS = 60
"""Rows per table in Markdown and text (a pull-request comment has a size limit)."""
REASON_CHARS = 160
"""A refusal's reason is cut to this many characters in Markdown and text."""


def _figure(r: BenchRow) -> dict:
    return {"key": r.key, "planner": r.planner, "mode": r.mode, "scenario": r.scenario or "-",
            "bs": r.bs_label}


def model(old: list[BenchRow], new: list[BenchRow]) -> dict:
    """The comparison's benchmark fields: ``bench`` (the moves,
    :func:`~conformance.reporting.bench_noise.moved`), ``bench_rounds``
    (:func:`~conformance.reporting.bench_noise.rounds_compared`) and ``bench_unpaired``:
    ``refused`` (figures of both files refused on a side: :func:`_figure` fields, ``side`` one of
    ``OLD`` / ``NEW`` / ``both``, ``reason`` the first side's reason), ``only_old`` and ``only_new``
    (figures of one file, in its order)."""
    before, after = {r.key: r for r in old}, {r.key: r for r in new}
    refused = []
    for r in new:
        o = before.get(r.key)
        if o is not None and (o.refused or r.refused):
            side = "both" if o.refused and r.refused else "NEW" if r.refused else "OLD"
            refused.append({**_figure(r), "side": side, "reason": r.refused or o.refused})
    return {"bench": bench_noise.moved(old, new),
            "bench_rounds": bench_noise.rounds_compared(old, new),
            "bench_unpaired": {"refused": refused,
                               "only_old": [_figure(o) for o in old if o.key not in after],
                               "only_new": [_figure(r) for r in new if r.key not in before]}}


def regression_parts(model: dict) -> list[str]:
    """The benchmark regressions for the headline: figures refused in NEW (not in OLD), figures
    of OLD missing from NEW; empty without benchmarks or when there are none."""
    unpaired = model.get("bench_unpaired")
    if not unpaired:
        return []
    counts = ((sum(1 for f in unpaired["refused"] if f["side"] == "NEW"),
               "benchmark figure(s) refused in NEW"),
              (len(unpaired["only_old"]), "benchmark figure(s) of OLD missing from NEW"))
    return [f"{n} {what}" for n, what in counts if n]


def regressions(model: dict) -> int:
    """How many benchmark figures count as regressions (:func:`regression_parts`)."""
    unpaired = model.get("bench_unpaired")
    if not unpaired:
        return 0
    return sum(1 for f in unpaired["refused"] if f["side"] == "NEW") + len(unpaired["only_old"])


def bench_line(model: dict) -> str:
    """The benchmarks' part of the headline: moves called, how many figures could be judged, the
    rounds and repeats each side had; then the figures refused in OLD or on both sides and those
    only in NEW, when there are any (the regressions lead the headline, :func:`regression_parts`).
    """
    r = model["bench_rounds"]
    counts = (f"repeats: old {r['old_repeats']}, new {r['new_repeats']}; "
              f"rounds: old {r['old']}, new {r['new']}")
    need = (f"a move needs >= {r['min_repeats']} repeats a side (every repeat apart) or, "
            f"without repeats, >= {r['min_rounds']} rounds a side (IQRs apart)")
    if not r["judged"]:
        line = f"benchmarks: none of {r['figures']} figure(s) judged ({counts}; {need})"
    else:
        line = (f"{len(model['bench'])} benchmark figure(s) moved beyond their noise "
                f"({r['judged']} of {r['figures']} judged; {counts}; {need})")
    unpaired = model.get("bench_unpaired") or {"refused": [], "only_new": []}
    sides = [f["side"] for f in unpaired["refused"]]
    notes = [f"{n} {what}" for n, what in ((sides.count("OLD"), "figure(s) refused in OLD"),
                                           (sides.count("both"), "refused in both"),
                                           (len(unpaired["only_new"]), "only in NEW")) if n]
    return "; ".join([line, *notes])


def _cells(f: dict, quote) -> list[str]:
    """planner, mode, scenario, bs of a figure; ``quote`` renders the text read from the file."""
    scenario = f["scenario"]
    return [quote(str(f["planner"])), quote(str(f["mode"])),
            "-" if scenario == "-" else quote(str(scenario)), str(f["bs"])]


def _table(title: str, rows: list[list], headers: list[str], fmt: str, total: int) -> list[str]:
    md = fmt == "github"
    out = ["", f"{'### ' if md else ''}{title}", "",
           tabulate(rows, headers=headers, tablefmt=fmt, disable_numparse=True)]
    if total > MAX_ROWS:
        out.append(f"... and {total - MAX_ROWS} more")
    return out


def render(model: dict, fmt: str, quote) -> list[str]:
    """The benchmark tables of Markdown (``fmt="github"``) or text (``"simple"``): the moves, the
    refused figures, the figures only in OLD and only in NEW (each table only when it has rows);
    ``quote`` renders every cell read from the files (module docstring)."""
    out: list[str] = []
    head = ["planner", "mode", "scenario", "bs"]
    if model["bench"]:
        rows = [[*_cells(m, quote), f"{m['old']:.2f}", f"{m['new']:.2f}", f"{m['ratio']:.2f}x",
                 f"{m['old_repeats']}/{m['new_repeats']}", f"{m['old_rounds']}/{m['new_rounds']}"]
                for m in model["bench"][:MAX_ROWS]]
        out += _table("Benchmarks moved beyond their noise", rows,
                      [*head, "old p50 us", "new p50 us", "new/old", "repeats old/new",
                       "rounds old/new"], fmt, len(model["bench"]))
    unpaired = model.get("bench_unpaired") or {}
    refused = unpaired.get("refused") or []
    if refused:
        rows = [[f["side"], *_cells(f, quote), quote(str(f["reason"])[:REASON_CHARS])]
                for f in refused[:MAX_ROWS]]
        out += _table(f"Benchmark figures refused, not compared ({len(refused)})", rows,
                      ["refused in", *head, "reason"], fmt, len(refused))
    for key, title in (("only_old", "only in OLD (missing from NEW)"), ("only_new", "only in NEW")):
        figures = unpaired.get(key) or []
        if figures:
            rows = [[*_cells(f, quote), quote(str(f["key"]))] for f in figures[:MAX_ROWS]]
            out += _table(f"Benchmark figures {title} ({len(figures)})", rows,
                          [*head, "figure"], fmt, len(figures))
    return out
