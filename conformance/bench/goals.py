"""The serving goals of the benchmark, evaluated as ratios on one run's annotated benchmarks.

Each goal reads only figures of the same run (:func:`conformance.bench.summary_table.annotate`)
and says ``met`` or how far it misses (the worst benchmark and its ratio to the target). A goal
whose figures are missing from the run (no GPU, a planner not selected) says so.

With repeats (``bench --repeat N``, :mod:`conformance.reporting.bench_repeats`) a goal's value is
taken in each repeat (a ratio against that repeat's own floor), the figure's value is the median
of its N values, and the goal is judged on the worst figure's median, the range of its N values
printed beside it (``21.3 (19.8..24.6 over 3 repeats)``): one run's figure moves by a third
between runs on the same machine, so a goal judged on one run is noisy.
"""

from __future__ import annotations

from math import isfinite
from statistics import median

from tabulate import tabulate

from conformance.bench.refusal import refused
from conformance.bench.summary_table import bs_label, p50_us
from conformance.reporting.bench_figures import goal_cell
from conformance.reporting.bench_repeats import by_figure, judged_on, repeat_of, repeats
from conformance.reporting.goal_records import verdict_for

GPU_PLANNERS = ("triton", "numba-cuda")
BOUND_PLANNERS = ("triton-bound", "numba-cuda-bound")
"""The bound form of each (a planner bound to a buffer set validated once, ``bind`` of the corpus
subject's ``registry``): the eager goals are also shown for it."""
HEADERS = ["goal", "target", "worst measured", "verdict"]


def _p(b: dict) -> dict:
    return b.get("params") or {}


def _pick(benches, planners, mode, scenario=None):
    return [b for b in benches if _p(b).get("planner") in planners and _p(b).get("mode") == mode
            and (scenario is None or _p(b).get("scenario", "reused") == scenario)]


def _verdict(worst: float | None, target: float, what: str) -> str:
    return NOT_MEASURED if worst is None else verdict_for(worst, target, what)


def _where(b: dict) -> str:
    return f"{_p(b).get('planner')} {_p(b).get('scenario', 'reused')} bs {bs_label(b)}"


def _row(goal: str, target_text: str, picked: list, value, target: float,
         expected: int = 1) -> dict:
    """The goal's record (:data:`RECORD_KEYS`): its worst figure by the median over repeats.

    ``picked`` holds every entry of the goal's figures, refused ones too: a goal is never judged
    on what is left of a figure after a refusal, nor on a figure with fewer than ``expected``
    repeats (a repeat whose test errored leaves no entry): the verdict then says which figure
    could not be judged, and the goal is not met."""
    record = dict.fromkeys(RECORD_KEYS)
    record.update(goal=goal, target=target_text, verdict=NOT_MEASURED,
                  planners=sorted({str(_p(b).get("planner")) for b in picked}))
    for members in by_figure(picked).values():
        bad = next((b for b in members if refused(b)), None)
        if bad is not None:
            record["where"] = _where(bad)
            record["verdict"] = f"not judged: a figure was refused ({_where(bad)})"
            return record
        values = [value(b) for b in members]
        if any(v is not None and not isfinite(v) for v in values):
            record["where"] = _where(members[0])
            record["verdict"] = f"not judged: a figure is not finite ({_where(members[0])})"
            return record
        if any(v is not None for v in values) and len(members) < expected:
            record["where"] = _where(members[0])
            record["verdict"] = (f"not judged: {_where(members[0])} has {len(members)} of "
                                 f"{expected} repeats")
            return record
    scored = []
    for members in by_figure(picked).values():
        values = [v for v in (value(b) for b in members) if v is not None]
        if values:
            scored.append((median(values), values, members[0]))
    if not scored:
        return record
    worst, values, b = max(scored, key=lambda s: s[0])
    where = _where(b)
    record.update(median=worst, low=min(values), high=max(values), repeats=len(values),
                  where=where, verdict=_verdict(worst, target, where))
    return record


RECORD_KEYS = ("goal", "target", "median", "low", "high", "repeats", "where", "verdict",
               "planners")
"""A goal's record (:func:`records`, the bench JSON's ``conformance_goals``): ``median`` the worst
figure's value (the median of its ``repeats`` values, from ``low`` to ``high``), ``where`` that
figure; all but goal, target, verdict and planners None when not measured. ``planners``: every
planner with a figure the goal was judged on (sorted names; empty when none ran), so that a report
withholds the goal when it withholds any of them, not only the one named in ``where``."""


measured_text = goal_cell
"""The "worst measured" cell (:func:`conformance.reporting.bench_figures.goal_cell`)."""


def evaluate(benches: list[dict]) -> list[list[str]]:
    """One row per goal (:data:`HEADERS`)."""
    return [[r["goal"], r["target"], measured_text(r), r["verdict"]] for r in records(benches)]


def records(benches: list[dict]) -> list[dict]:
    """One record per goal (:data:`RECORD_KEYS`), from every entry of the run, refused ones too
    (:func:`_row`: a goal with a refused figure, or a figure short of the run's repeats, is not
    judged)."""
    n = repeats(benches)
    row = lambda *args: _row(*args, expected=n)  # noqa: E731
    on_gpu = [b for b in benches if (b.get("extra_info") or {}).get("planner_mode") == "gpu"]
    us = lambda b: p50_us(b)  # noqa: E731
    extra = lambda key: (lambda b: (b.get("extra_info") or {}).get(key))  # noqa: E731
    replay = _pick(on_gpu, GPU_PLANNERS, "replay")
    eager = []
    for planners, label in ((GPU_PLANNERS, "triton and numba-cuda"),
                            (BOUND_PLANNERS, "their bound plans")):
        eager += [
            row(f"eager, varying-bs, {label}", "<= 20 us",
                 _pick(on_gpu, planners, "eager", "varying-bs"), us, 20.0),
            row(f"eager, varying-bs, {label}, vs the reference planner (upstream's launcher)",
                 "<= 0.5x", _pick(on_gpu, planners, "eager", "varying-bs"),
                 extra("ratio_to_reference"), 0.5),
            row(f"eager, reused, {label}, vs the empty Triton launch", "<= 1.3x",
                 _pick(on_gpu, planners, "eager", "reused"),
                 lambda b: _vs_empty_triton(b, benches), 1.3),
        ]
    return [
        *eager,
        row("bound plan, per-step validation", "<= 3 us",
             _pick(on_gpu, BOUND_PLANNERS, "validate"), us, 3.0),
        row("replay device time vs the chain floor", "<= 1.3x", replay, extra("ratio_to_chain"),
             1.3),
        row("replay device time at bs 4096", "<= 3.5 us",
             [b for b in replay if _p(b).get("bs") == 4096], us, 3.5),
        row("python planner, eager, bs 4096", "<= 5000 us",
             [b for b in _pick(benches, ("python",), "eager") if _p(b).get("bs") == 4096], us,
             5000.0),
    ]


def _vs_empty_triton(bench: dict, benches: list[dict]) -> float | None:
    """p50 over the empty Triton launch's p50 (eager) of the same repeat."""
    floor = [p50_us(b) for b in benches
             if (b.get("extra_info") or {}).get("floor") == "empty-triton"
             and _p(b).get("mode") == "eager" and repeat_of(b) == repeat_of(bench)]
    return p50_us(bench) / floor[0] if floor else None


NOT_MEASURED = "not measured in this run"


def render(benches: list[dict]) -> str:
    """The measured goals as a GitHub Markdown table, then one line naming the goals this run has
    no figures for (``N of M goal(s) not measured in this run: ...``); only that line when none
    was measured (a CPU run, say)."""
    rows = evaluate(benches)
    measured = [r for r in rows if r[3] != NOT_MEASURED]
    missing = [r[0] for r in rows if r[3] == NOT_MEASURED]
    n = repeats(benches)
    out = [f"Goals {judged_on(n)}", tabulate(measured, headers=HEADERS, tablefmt="github",
                                  disable_numparse=True)] if measured else []
    if missing:
        out.append(f"{len(missing)} of {len(rows)} goal(s) {NOT_MEASURED} (each needs the "
                   f"planners it names in the run, and its mode: replay, the GPU planners and "
                   f"their bound forms need a GPU): " + "; ".join(missing))
    return "\n\n".join(out)
