"""Ratios and the terminal table of a benchmark run (issue #5, items 1 and 4).

Works on pytest-benchmark's benchmark dicts (``Metadata.as_dict()``, the ``benchmarks`` entries
of ``--benchmark-json``), times in seconds there, in microseconds (us) here. A planner benchmark
has ``params`` planner, mode, bs, scenario; a floor has ``params`` floor, mode and
``extra_info.floor`` (the name :mod:`conformance.reporting.bench_figures` reads).

:func:`annotate` adds to each planner benchmark's ``extra_info``: ``p50_us``, ``floor_name``,
``floor_p50_us``, ``ratio_to_floor`` (p50 / the floor's p50 in :data:`floors.FLOOR_MODE` of its
mode, same run) and ``ratio_to_python`` (p50 / the ``python`` planner's p50 at the same mode, bs
and scenario), None where the other figure is missing.
"""

from __future__ import annotations

from tabulate import tabulate

from conformance.bench.floors import FLOOR_MODE, floor_of

US = 1e6
HEADERS = ["planner", "mode", "bs", "p50 us", "min us", "IQR us", "x floor", "floor",
           "x python", "first call ms"]


def _p(bench: dict) -> dict:
    return bench.get("params") or {}


def p50_us(bench: dict) -> float:
    """The benchmark's median per call, us."""
    return bench["stats"]["median"] * US


def _sig(value: float) -> float:
    return float(f"{value:.6g}")


def annotate(benches: list[dict]) -> list[dict]:
    """Add the ratio fields (module docstring) to every planner benchmark, in place; returns it."""
    floors = {(b["extra_info"]["floor"], _p(b).get("mode")): p50_us(b)
              for b in benches if (b.get("extra_info") or {}).get("floor")}
    python = {(_p(b).get("mode"), _p(b).get("bs"), _p(b).get("scenario")): p50_us(b)
              for b in benches if _p(b).get("planner") == "python"}
    for b in benches:
        params = _p(b)
        if params.get("planner") is None:
            continue
        extra = b.setdefault("extra_info", {})
        mode, us = params.get("mode"), p50_us(b)
        name = floor_of(params["planner"])
        floor = floors.get((name, FLOOR_MODE.get(mode)))
        py = python.get((mode, params.get("bs"), params.get("scenario")))
        extra.update({
            "p50_us": _sig(us),
            "floor_name": f"{name} ({FLOOR_MODE.get(mode)})",
            "floor_p50_us": None if floor is None else _sig(floor),
            "ratio_to_floor": None if not floor else _sig(us / floor),
            "ratio_to_python": None if not py else _sig(us / py),
        })
    return benches


def _fmt(value, spec: str) -> str:
    return "-" if value is None else format(value, spec)


def _ratio(value) -> str:
    """A ratio with three significant digits (0.00123, 0.457, 12.3, 8562)."""
    if value is None:
        return "-"
    return f"{value:.0f}" if value >= 1000 else f"{value:.3g}"


def rows(benches: list[dict]) -> list[list]:
    """One row per (planner, mode, bs[, scenario]), then the floors (see :data:`HEADERS`)."""
    scenarios = {_p(b).get("scenario") for b in benches if _p(b).get("planner")}
    out, floor_rows = [], []
    for b in benches:
        params, extra, stats = _p(b), b.get("extra_info") or {}, b["stats"]
        spread = [_fmt(stats["min"] * US, ".2f"), _fmt((stats["q3"] - stats["q1"]) * US, ".2f")]
        first = extra.get("first_call_us")
        first = None if first is None else first / 1e3
        if extra.get("floor"):
            floor_rows.append([f"floor: {extra['floor']}", params.get("mode"), "-",
                               _fmt(p50_us(b), ".2f"), *spread, "1", "-", "-",
                               _fmt(first, ".1f")])
            continue
        mode = params.get("mode")
        if len(scenarios) > 1:
            mode = f"{mode} ({params.get('scenario')})"
        planner = params.get("planner")
        if extra.get("planner_mode"):
            planner = f"{planner} [{extra['planner_mode']}]"
        out.append([planner, mode, params.get("bs"), _fmt(p50_us(b), ".2f"), *spread,
                    _ratio(extra.get("ratio_to_floor")),
                    (extra.get("floor_name") or "-").split(" ")[0],
                    _ratio(extra.get("ratio_to_python")), _fmt(first, ".1f")])
    order = {m: i for i, m in enumerate(("eager", "validate", "launch", "replay"))}
    out.sort(key=lambda r: (str(r[0]), order.get(str(r[1]).split(" ")[0], 9), str(r[1]), r[2]))
    floor_rows.sort(key=lambda r: (r[0], order.get(r[1], 9)))
    return out + floor_rows


def render(benches: list[dict]) -> str:
    """The table as GitHub Markdown (:func:`rows` under :data:`HEADERS`)."""
    return tabulate(rows(benches), headers=HEADERS, tablefmt="github", disable_numparse=True)
