"""The report's benchmark plots: p50 against bs per mode, as inline SVG.

One plot per mode (eager, replay, ...) that has a figure of a planner at some bs; a log y axis in
microseconds; each planner a coloured line (a varying-bs or other scenario figure named
``PLANNER SCENARIO``), each floor a dashed grey one (a floor with one figure for every bs, a
horizontal line). Refused figures are never drawn. Names are escaped for the HTML they go into.
"""

from __future__ import annotations

import math
from dataclasses import replace
from html import escape

from conformance.reporting.bench_figures import BenchRow

PALETTE = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf", "#8c564b", "#e377c2")
"""Line colours of the planners, in their sorted order (repeating after eight)."""
FLOOR_COLOUR = "#777"
"""The dashed floors' colour."""


def plots(rows: list[BenchRow]) -> list[tuple[str, str]]:
    """One ``(mode, svg)`` per mode: p50 vs bs per planner, log y axis, floors dashed."""
    rows = [r for r in rows if not r.refused]
    rows = [r if r.floor or r.scenario in (None, "reused")
            else replace(r, planner=f"{r.planner} {r.scenario}") for r in rows]
    modes = sorted({r.mode for r in rows if r.bs is not None or r.floor})
    return [(m, _svg(m, [r for r in rows if r.mode == m])) for m in modes
            if any(not r.floor and r.bs is not None for r in rows if r.mode == m)]


def _svg(mode: str, rows: list[BenchRow], width: int = 640, height: int = 300) -> str:
    left, right, top, bottom = 60, 170, 16, 40
    xs = sorted({r.bs for r in rows if r.bs is not None})
    values = [r.p50 for r in rows if r.p50 > 0]
    lo = 10 ** math.floor(math.log10(min(values)))
    hi = 10 ** math.ceil(math.log10(max(values)))
    hi = hi * 10 if hi == lo else hi
    pw, ph = width - left - right, height - top - bottom

    def x(bs: int) -> float:
        return left + (xs.index(bs) + 0.5) * pw / len(xs)

    def y(us: float) -> float:
        return top + ph - (math.log10(max(us, lo)) - math.log10(lo)) / math.log10(hi / lo) * ph

    out = [f'<svg class="plot" width="{width}" '
           f'height="{height}" role="img" aria-label="p50 vs bs, {escape(mode)}">',
           f'<rect x="{left}" y="{top}" width="{pw}" height="{ph}" fill="#fff" stroke="#ccc"/>']
    decade = lo
    while decade <= hi * 1.0001:
        out.append(f'<line x1="{left}" x2="{left + pw}" y1="{y(decade):.1f}" y2="{y(decade):.1f}" '
                   f'stroke="#eee"/><text x="{left - 6}" y="{y(decade) + 4:.1f}" '
                   f'text-anchor="end">{decade:g}</text>')
        decade *= 10
    for bs in xs:
        out.append(f'<text x="{x(bs):.1f}" y="{top + ph + 16}" text-anchor="middle">{bs}</text>')
    out.append(f'<text x="{left + pw / 2}" y="{height - 6}" text-anchor="middle">bs</text>'
               f'<text x="14" y="{top + ph / 2}" transform="rotate(-90 14 {top + ph / 2})" '
               f'text-anchor="middle">p50 (us)</text>')
    legend_y = top + 10
    planners = sorted({r.planner for r in rows if not r.floor})
    for i, planner in enumerate(planners):
        colour = PALETTE[i % len(PALETTE)]
        pts = sorted((r.bs, r.p50) for r in rows if r.planner == planner and not r.floor
                     and r.bs is not None)
        path = " ".join(f"{x(b):.1f},{y(v):.1f}" for b, v in pts)
        out.append(f'<polyline points="{path}" fill="none" stroke="{colour}" stroke-width="2"/>')
        out.extend(f'<circle cx="{x(b):.1f}" cy="{y(v):.1f}" r="3" fill="{colour}">'
                   f'<title>{escape(planner)} bs={b}: {v:.2f} us</title></circle>' for b, v in pts)
        out.append(_legend(left + pw + 10, legend_y, colour, planner, dashed=False))
        legend_y += 18
    for name in sorted({r.planner for r in rows if r.floor}):
        pts = sorted((r.bs, r.p50) for r in rows if r.floor and r.planner == name)
        if all(b is None for b, _ in pts):  # one figure for every bs: a horizontal line
            yy = y(pts[0][1])
            out.append(f'<line x1="{left}" x2="{left + pw}" y1="{yy:.1f}" y2="{yy:.1f}" '
                       f'stroke="{FLOOR_COLOUR}" stroke-dasharray="5,4"/>')
        else:
            path = " ".join(f"{x(b):.1f},{y(v):.1f}" for b, v in pts if b is not None)
            out.append(f'<polyline points="{path}" fill="none" stroke="{FLOOR_COLOUR}" '
                       f'stroke-dasharray="5,4"/>')
        out.append(_legend(left + pw + 10, legend_y, FLOOR_COLOUR, f"floor: {name}", dashed=True))
        legend_y += 18
    out.append("</svg>")
    return "\n".join(out)


def _legend(x: float, y: float, colour: str, label: str, *, dashed: bool) -> str:
    dash = ' stroke-dasharray="5,4"' if dashed else ' stroke-width="2"'
    return (f'<line x1="{x}" x2="{x + 18}" y1="{y}" y2="{y}" stroke="{colour}"{dash}/>'
            f'<text x="{x + 24}" y="{y + 4}">{escape(label[:22])}</text>')
