"""A second witness for the replay figures: Triton's ``do_bench_cudagraph`` beside our own timer.

The bench's ``replay`` figure is device time of one plan per CUDA graph, replays queued behind a
sleep kernel (:func:`conformance.bench.timing.graph_replay_time` via
:class:`conformance.bench.timing.EventClock`); it includes the graph's own launch. Triton's
``triton.testing.do_bench_cudagraph(fn, rep, return_mode="median")`` captures ``n`` calls of
``fn`` in one graph (``n`` from its own estimate, ``rep`` ms of work) and divides the replay's
CUDA-event time by ``n``: device time per call with the graph launch amortised away. So the
witness compares like with like: our timer at :data:`CALLS_PER_GRAPH` calls per graph against
Triton's figure; the two agree when they are within :data:`AGREE_WITHIN` of each other. The
one-plan-per-graph figure is shown beside them: its excess over the amortised figure is the graph
launch a server pays once per step.

Both witnesses run in the planner's process, as the bench does (README "Benchmarks"): a planner
that rebinds ``triton.testing`` can change the second witness, not the figure the goals read.
"""

from __future__ import annotations

from collections.abc import Callable

from tabulate import tabulate

from conformance.bench import timing as gt
from conformance.reporting.bench_figures import format_ratio

CROSS_CHECK_KEY = "cross_check"
"""``extra_info`` key of a ``replay`` benchmark that carries a cross-check (:func:`measure`)."""
CALLS_PER_GRAPH = 100
"""Calls per graph of our amortised figure (Triton picks its own ``n``, typically thousands)."""
AGREE_WITHIN = 0.2
"""Relative difference of the two amortised figures below which they agree."""
TRITON_REP_MS = 20
"""``rep`` of ``do_bench_cudagraph``: ms of work in the graph it times."""


def measure(fn: Callable[[], object], one_per_graph_us: float,
            bench: Callable | None = None) -> dict:
    """Both amortised figures of ``fn`` (a capturable planner call on CUDA tensors), us per call.

    ``bench`` is ``do_bench_cudagraph`` (default: imported from ``triton.testing``). Returns
    ``{"tool", "tool_us", "ours_us", "calls_per_graph", "ratio", "agree", "one_per_graph_us"}``,
    ``ratio`` = tool_us / ours_us; or ``{"tool", "error"}`` when Triton's tool is missing or
    raises (the row then says so: never a silent absence).
    """
    tool = "triton.testing.do_bench_cudagraph"
    try:
        if bench is None:
            from triton.testing import do_bench_cudagraph as bench
        tool_us = float(bench(fn, rep=TRITON_REP_MS, return_mode="median")) * 1e3
    except Exception as exc:  # noqa: BLE001 - the witness is reported as missing, with why
        return {"tool": tool, "error": f"{type(exc).__name__}: {exc}"}
    ours_us = gt.graph_replay_time(fn, calls_per_graph=CALLS_PER_GRAPH, replays=10).median
    ratio = tool_us / ours_us if ours_us > 0 else None
    return {"tool": tool, "tool_us": round(tool_us, 3), "ours_us": round(ours_us, 3),
            "calls_per_graph": CALLS_PER_GRAPH, "ratio": ratio,
            "agree": ratio is not None and abs(ratio - 1) <= AGREE_WITHIN,
            "one_per_graph_us": round(one_per_graph_us, 3)}


DOC_LINE = (f"One replay figure per planner (its largest bs) timed twice more: by our own timer at "
            f"{CALLS_PER_GRAPH} calls per CUDA graph and by Triton's do_bench_cudagraph (its own "
            f"calls per graph); both amortise the graph launch, which the one-plan-per-graph "
            f"figure pays. They agree within {AGREE_WITHIN:.0%}.")
"""The line above the cross-check table in the bench Markdown."""

HEADERS = ["planner", "bs", "one plan per graph us", f"ours, {CALLS_PER_GRAPH} per graph us",
           "do_bench_cudagraph us", "tool / ours", "witnesses"]


def rows(benches: list[dict]) -> list[list]:
    """One row per benchmark dict that carries a cross-check, in run order."""
    out = []
    for bench in benches:
        check = (bench.get("extra_info") or {}).get(CROSS_CHECK_KEY)
        if not check:
            continue
        params = bench.get("params") or {}
        label = [params.get("planner", "?"), params.get("bs", "?")]
        if "error" in check:
            out.append(label + ["-", "-", "-", "-", f"not measured: {check['error']}"])
            continue
        verdict = "agree" if check["agree"] else f"DISAGREE (beyond {AGREE_WITHIN:.0%})"
        out.append(label + [f"{check['one_per_graph_us']:.2f}", f"{check['ours_us']:.2f}",
                            f"{check['tool_us']:.2f}", format_ratio(check["ratio"]), verdict])
    return out


def render(benches: list[dict]) -> str:
    """The cross-check table (GitHub Markdown), or one line saying why there is none."""
    found = rows(benches)
    if not found:
        return "no cross-check: the run has no replay figure at its largest bs"
    return tabulate(found, headers=HEADERS, tablefmt="github")
