"""The entries sweep's ratios, Markdown tables and JSON (:mod:`impls.entries_planner.harness.entries`).

Rows are plain dicts with a ``kind``: ``workload`` (one step's facts), ``floor`` (an empty kernel
of one framework, eager or replay), ``gather`` (the gather floor at one launch shape), ``eager``
and ``replay`` (one entries planner), ``plan`` (a whole step: offsets planner then entries
planner, replay), ``flat`` (the whole plan in one launcher call, ``mode`` eager or replay). A
timed row has ``p50_us``, ``iqr_us`` and ``n`` (samples), or None for all three
and a ``status`` saying why (``not published: ...``, ``not measured: ...``, ``not available
without CUDA``). Every ratio is computed here, by :func:`add_ratios`, from the ``p50_us`` of rows
of the same run, and is None when either figure is missing.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

from impls.entries_planner.harness.entries_calls import PUBLISHED

FLOOR_OF = {"triton": "triton", "numba-cuda": "numba-cuda"}
"""The framework whose floors a planner is divided by; another planner (``module:callable``) is
divided by the fastest framework's floor, the Python planner by none."""


def _p50(row: dict | None) -> float | None:
    return None if row is None else row.get("p50_us")


def _ratio(num: float | None, den: float | None) -> float | None:
    if num is None or den is None or den <= 0 or not math.isfinite(num / den):
        return None
    return num / den


def _floor(rows: list[dict], kind: str, framework: str | None, planner: str, **where):
    """The floor row for ``planner``: its framework's, the fastest one's (external), or None."""
    if planner == "python":
        return None
    found = [r for r in rows if r["kind"] == kind and r.get("p50_us") is not None
             and all(r.get(k) == v for k, v in where.items())
             and (framework is None or r["framework"] == framework)]
    return min(found, key=lambda r: r["p50_us"], default=None)


def add_ratios(rows: list[dict]) -> None:
    """Fill ``vs_empty`` (eager, replay), ``vs_gather`` and ``gather_shape`` (replay), ``best``
    (gather: the fastest shape of its framework, bs and variant) and ``vs_upstream_offsets``
    (plan: this step's p50 over the same entries planner's behind upstream's offsets launcher) and
    ``vs_upstream_wrapper`` (flat: over upstream's launcher of the same mode, bs and variant)."""
    for r in rows:
        if r["kind"] == "gather":
            best = _floor(rows, "gather", r["framework"], "", bs=r["bs"], variant=r["variant"])
            r["best"] = best is r
    for r in rows:
        framework = FLOOR_OF.get(r.get("planner", ""))
        if r["kind"] in ("eager", "replay"):
            empty = _floor(rows, "floor", framework, r["planner"], mode=r["kind"])
            r["empty_floor"] = empty and empty["floor"]
            r["vs_empty"] = _ratio(_p50(r), _p50(empty))
        if r["kind"] == "replay":
            gather = _floor(rows, "gather", framework, r["planner"], bs=r["bs"],
                            variant=r["variant"])
            r["gather_shape"] = gather and f"{gather['framework']} {gather['shape']}"
            r["vs_gather"] = _ratio(_p50(r), _p50(gather))
        if r["kind"] == "plan" and not r.get("upstream_offsets"):
            theirs = next((u for u in rows if u["kind"] == "plan" and u.get("upstream_offsets")
                           and u["entries"] == r["entries"] and u["bs"] == r["bs"]
                           and u["variant"] == r["variant"]), None)
            r["vs_upstream_offsets"] = _ratio(_p50(r), _p50(theirs))
        if r["kind"] == "flat" and not r.get("upstream"):
            theirs = next((u for u in rows if u["kind"] == "flat" and u.get("upstream")
                           and u["mode"] == r["mode"] and u["bs"] == r["bs"]
                           and u["variant"] == r["variant"]), None)
            r["vs_upstream_wrapper"] = _ratio(_p50(r), _p50(theirs))


def _us(value) -> str:
    return "-" if value is None else f"{value:.2f}"


def _x(value) -> str:
    return "-" if value is None else f"{value:.2f}x"


def _status(r: dict) -> str:
    return r["status"] if r["status"] == PUBLISHED else f"`{r['status']}`"


def _tabulate(headers: list[str], body: list[list]) -> str:
    from tabulate import tabulate

    return tabulate(body, headers=headers, tablefmt="github", disable_numparse=True)


def tables(rows: list[dict]) -> dict[str, str]:
    """Section title -> Markdown table."""
    of = lambda kind: [r for r in rows if r["kind"] == kind]  # noqa: E731
    out = {}
    out["Workload per step"] = _tabulate(
        ["variant", "bs", "active", "padding rows", "total entries T", "prefix p50", "prefix max",
         "window", "verify capacity"],
        [[r["variant"], r["bs"], r["active requests"], r["padding rows"], r["total entries"],
          r["prefix p50"], r["prefix max"], r["window"], r["verify capacity"]]
         for r in of("workload")])
    out["Eager: the launch call's host wall time"] = _tabulate(
        ["variant", "bs", "planner", "p50 us", "IQR us", "vs empty launch", "status"],
        [[r["variant"], r["bs"], r["label"], _us(r["p50_us"]), _us(r["iqr_us"]),
          _x(r.get("vs_empty")), _status(r)] for r in of("eager")])
    out["Replay: device time per plan, one plan per CUDA graph"] = _tabulate(
        ["variant", "bs", "planner", "p50 us", "IQR us", "vs empty kernel", "vs gather floor",
         "gather floor shape", "status"],
        [[r["variant"], r["bs"], r["label"], _us(r["p50_us"]), _us(r["iqr_us"]),
          _x(r.get("vs_empty")), _x(r.get("vs_gather")), r.get("gather_shape") or "-",
          _status(r)] for r in of("replay")])
    out["Whole plan per step: offsets planner then entries planner, replay"] = _tabulate(
        ["variant", "bs", "offsets planner", "entries planner", "p50 us", "IQR us",
         "vs upstream's offsets + same entries", "status"],
        [[r["variant"], r["bs"], r["offsets_label"], r["entries_label"], _us(r["p50_us"]),
          _us(r["iqr_us"]), _x(r.get("vs_upstream_offsets")), _status(r)] for r in of("plan")])
    out["Whole plan in one call: our pipelines and upstream's wrapper, eager and replay"] = _tabulate(
        ["variant", "bs", "launcher", "mode", "p50 us", "IQR us", "vs upstream's wrapper",
         "status"],
        [[r["variant"], r["bs"], r["label"], r["mode"], _us(r["p50_us"]), _us(r["iqr_us"]),
          _x(r.get("vs_upstream_wrapper")), _status(r)] for r in of("flat")])
    out["Floors: empty kernel launch"] = _tabulate(
        ["framework", "mode", "p50 us", "IQR us", "status"],
        [[r["framework"], r["mode"], _us(r["p50_us"]), _us(r["iqr_us"]), _status(r)]
         for r in of("floor")])
    out["Floors: gather of 4 x T int64 through an index, per launch shape"] = _tabulate(
        ["variant", "bs", "T", "framework", "shape", "replay p50 us", "IQR us", "fastest",
         "status"],
        [[r["variant"], r["bs"], r["total"], r["framework"], r["shape"], _us(r["p50_us"]),
          _us(r["iqr_us"]), "yes" if r.get("best") else "", _status(r)] for r in of("gather")])
    return out


def write(out: Path, rows: list[dict], head: dict) -> tuple[Path, Path]:
    """Write ``entries-bench.md`` and ``entries-bench.json`` under ``out``; return both paths.
    ``head``: ``fingerprint`` (text), ``fingerprint_fields``, ``mode``, ``workload`` (text),
    ``legend`` (text), ``seconds``, ``complete`` (False: the run is still going, or was stopped
    after the steps shown)."""
    out.mkdir(parents=True, exist_ok=True)
    state = "" if head["complete"] else " INCOMPLETE: the run stopped, or was stopped, here."
    parts = ["# Entries planner benchmark", "", head["fingerprint"], "",
             f"Mode: {head['mode']}; {head['seconds']:.0f} s.{state}", "", "## Workload", "",
             head["workload"], "", head["legend"], ""]
    for title, table in tables(rows).items():
        parts += [f"## {title}", "", table, ""]
    md, js = out / "entries-bench.md", out / "entries-bench.json"
    md.write_text("\n".join(parts))
    js.write_text(json.dumps({"fingerprint": head["fingerprint_fields"], "mode": head["mode"],
                              "complete": head["complete"], "workload": head["workload"], "seconds": head["seconds"],
                              "rows": rows}, indent=1, default=str) + "\n")
    return md, js
