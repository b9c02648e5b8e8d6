"""Ratios and the terminal table of a benchmark run.

Works on pytest-benchmark's benchmark dicts (``Metadata.as_dict()``, the ``benchmarks`` entries
of ``--benchmark-json``), times in seconds there, in microseconds (us) here. A planner benchmark
has ``params`` planner, mode, bs, scenario, workload; a floor has ``extra_info.floor`` (its name;
a chain floor also ``extra_info.chain`` and ``params`` bs and workload).

:func:`annotate` adds to each planner benchmark's ``extra_info``: ``p50_us``, ``floor_name``,
``floor_p50_us``, ``ratio_to_floor`` (p50 / the empty floor's p50 in :data:`floors.FLOOR_MODE` of
its mode, same run), ``chain_name`` and ``ratio_to_chain`` (p50 / the framework's chain floor at the
same floor mode, bs and workload; none for varying-bs), ``ratio_to_python`` (p50 / the ``python``
planner's p50 at the same mode, bs, scenario and workload) and ``reference_planner`` /
``ratio_to_reference`` (the same against the run's one ``module:attr`` planner, upstream's
launcher, say), None where the other figure is missing and on that planner's own rows. The report reads these fields; it computes no ratio.
A refused figure (:mod:`conformance.bench.refusal`) gets no ratio, is no other's denominator, and
its row reads ``refused: <reason>`` (:func:`render`: ``refused (N)``, the reason in note N). With repeats (:mod:`conformance.reporting.bench_repeats`)
every ratio is taken within one repeat (its own floors and python figures), and :func:`rows`
shows one row per figure: the median of the repeats' p50s with their range beside it.
"""

from __future__ import annotations

from tabulate import tabulate

from conformance.reporting.markdown import code_span

from conformance.bench.floors import CHAIN_OF_PLANNER, FLOOR_MODE, floor_of
from conformance.bench.refusal import published, refused
from conformance.reporting.bench_figures import format_ratio
from conformance.reporting.bench_repeats import by_repeat, merge, spread_text

US = 1e6
HEADERS = ["planner", "mode", "bs", "p50 us", "min us", "IQR us", "x floor", "floor", "x chain",
           "x python", "x reference", "first call ms"]


def _p(bench: dict) -> dict:
    return bench.get("params") or {}


def p50_us(bench: dict) -> float:
    """The benchmark's median per call, us."""
    return bench["stats"]["median"] * US


def _sig(value: float) -> float:
    return float(f"{value:.6g}")


def _case(bench: dict) -> tuple:
    """(mode, bs, scenario, workload) of a planner benchmark: what two planners share to compare."""
    p, extra = _p(bench), bench.get("extra_info") or {}
    return (p.get("mode"), p.get("bs"), p.get("scenario") or "reused",
            p.get("workload") or extra.get("workload") or "serving")


def external_planners(benches: list[dict]) -> list[str]:
    """The ``module:attr`` planners of the run (upstream's launcher, say), in order of appearance."""
    names = [_p(b).get("planner") for b in benches]
    return list(dict.fromkeys(n for n in names if n and ":" in n))


def annotate(benches: list[dict]) -> list[dict]:
    """Add the ratio fields (module docstring) to every planner benchmark, in place; returns it.
    Each repeat is annotated on its own: a ratio's two figures come from the same repeat."""
    for one in by_repeat(benches):
        _annotate(one)
    return benches


def _annotate(benches: list[dict]) -> list[dict]:
    floors, chains = {}, {}
    every, benches = benches, published(benches)
    for b in benches:
        extra = b.get("extra_info") or {}
        if extra.get("chain"):
            chains[(extra["floor"], _p(b).get("mode"), _p(b).get("bs"),
                    _p(b).get("workload") or extra.get("workload"))] = p50_us(b)
        elif extra.get("floor"):
            floors[(extra["floor"], _p(b).get("mode"))] = p50_us(b)
    python = {_case(b): p50_us(b) for b in benches if _p(b).get("planner") == "python"}
    externals = external_planners(benches)
    reference = externals[0] if len(externals) == 1 else None
    upstream = {} if reference is None else {  # floors and chains have no planner: never it
        _case(b): p50_us(b) for b in benches if _p(b).get("planner") == reference}
    for b in benches:
        params = _p(b)
        if params.get("planner") is None:
            continue
        extra = b.setdefault("extra_info", {})
        mode, us, case = params.get("mode"), p50_us(b), _case(b)
        name = floor_of(params["planner"])
        floor = floors.get((name, FLOOR_MODE.get(mode)))
        chain_name = CHAIN_OF_PLANNER.get(params["planner"])
        chain = None
        if chain_name and case[2] != "varying-bs":
            chain = chains.get((chain_name, FLOOR_MODE.get(mode), params.get("bs"), case[3]))
        py = python.get(case)
        ext = None if params["planner"] == reference else upstream.get(case)  # not against itself
        extra.update({
            "p50_us": _sig(us),
            "floor_name": f"{name} ({FLOOR_MODE.get(mode)})",
            "floor_p50_us": None if floor is None else _sig(floor),
            "ratio_to_floor": None if not floor else _sig(us / floor),
            "chain_name": None if chain is None else f"{chain_name} ({FLOOR_MODE.get(mode)})",
            "ratio_to_chain": None if not chain else _sig(us / chain),
            "ratio_to_python": None if not py else _sig(us / py),
            "reference_planner": reference if ext else None,
            "ratio_to_reference": None if not ext else _sig(us / ext),
        })
    return every


def _fmt(value, spec: str) -> str:
    return "-" if value is None else format(value, spec)


_ratio = format_ratio


def bs_label(bench: dict) -> str:
    """The bs cell: the bs, ``1..N`` for a varying-bs benchmark, ``-`` for none."""
    p = _p(bench)
    if p.get("bs") is None:
        return "-"
    return f"1..{p['bs']}" if p.get("scenario") == "varying-bs" else str(p["bs"])


def _p50_cell(bench: dict) -> str:
    """The p50 (us); with repeats the median of theirs, their range beside it."""
    spread = (bench.get("extra_info") or {}).get("repeat_p50_us")
    text = _fmt(p50_us(bench), ".2f")
    return f"{text} ({spread_text(spread)})" if spread else text


def rows(benches: list[dict]) -> list[list]:
    """One row per (planner, mode (scenario), bs[, workload]), then the floors (:data:`HEADERS`);
    with repeats one row per figure (:func:`conformance.reporting.bench_repeats.merge`)."""
    benches = merge(benches)
    workloads = {_case(b)[3] for b in benches if _p(b).get("planner")}
    out, floor_rows = [], []
    for b in benches:
        params, extra, stats = _p(b), b.get("extra_info") or {}, b["stats"]
        if refused(b):
            label = params.get("planner") or f"floor: {extra.get('floor')}"
            if params.get("planner") and extra.get("planner_mode"):  # as its measured rows
                label = f"{label} [{extra['planner_mode']}]"
            mode = f"{params.get('mode')} ({_case(b)[2]})" if params.get("planner") else \
                params.get("mode")
            if params.get("planner") and len(workloads) > 1:
                mode = f"{mode} {_case(b)[3]}"
            row = [label, mode, bs_label(b), f"refused: {refused(b)}"] + ["-"] * 8
            (floor_rows if extra.get("floor") else out).append(row)
            continue
        spread = [_fmt(stats["min"] * US, ".2f"), _fmt((stats["q3"] - stats["q1"]) * US, ".2f")]
        first = extra.get("first_call_us")
        first = None if first is None else first / 1e3
        if extra.get("floor"):
            shape = f" [{extra['chain_shape']}]" if extra.get("chain_shape") else ""
            floor_rows.append([f"floor: {extra['floor']}{shape}", params.get("mode"), bs_label(b),
                               _p50_cell(b), *spread, "1", "-", "-", "-", "-",
                               _fmt(first, ".1f")])
            continue
        mode = f"{params.get('mode')} ({_case(b)[2]})"
        if len(workloads) > 1:
            mode = f"{mode} {_case(b)[3]}"
        planner = params.get("planner")
        if extra.get("planner_mode"):
            planner = f"{planner} [{extra['planner_mode']}]"
        out.append([planner, mode, bs_label(b), _p50_cell(b), *spread,
                    _ratio(extra.get("ratio_to_floor")),
                    (extra.get("floor_name") or "-").split(" ")[0],
                    _ratio(extra.get("ratio_to_chain")), _ratio(extra.get("ratio_to_python")),
                    _ratio(extra.get("ratio_to_reference")), _fmt(first, ".1f")])
    order = {m: i for i, m in enumerate(("eager", "validate", "launch", "replay"))}
    scen = {s: i for i, s in enumerate(("(reused)", "(fresh)", "(varying-bs)"))}

    def key(r):
        mode, _, scenario = str(r[1]).partition(" ")
        bs = str(r[2]).split("..")[-1]
        return (str(r[0]), order.get(mode, 9), scen.get(scenario.split(" ")[0], 9), scenario,
                int(bs) if bs.isdigit() else -1)

    out.sort(key=key)
    floor_rows.sort(key=key)
    return out + floor_rows


def render(benches: list[dict]) -> str:
    """The table as GitHub Markdown (:func:`rows` under :data:`HEADERS`); the planner and mode
    cells, read from a benchmark file, are code spans (never Markdown of their own). A refused
    figure's cell reads ``refused (N)`` and its reason (it can quote a planner's exception
    message: a code span) is note N under the table, so that one long reason does not widen every
    row: ``(N) `planner`, `mode`, bs B: `refused: <reason>```."""
    table, notes = [], []
    for r in rows(benches):
        p50 = r[3]
        if str(p50).startswith("refused: "):
            notes.append(f"({len(notes) + 1}) {code_span(str(r[0]))}, {code_span(str(r[1]))}, "
                         f"bs {r[2]}: {code_span(p50)}")
            p50 = f"refused ({len(notes)})"
        table.append([code_span(str(r[0])), code_span(str(r[1])), r[2], p50, *r[4:]])
    text = tabulate(table, headers=HEADERS, tablefmt="github", disable_numparse=True)
    if notes:
        text += ("\n\nRefused figures (no time published; each its test's failure):\n\n"
                 + "\n".join(notes))
    return text
