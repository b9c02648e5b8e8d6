"""When two benchmark runs differ beyond their noise (``report --compare``).

A figure is judged one of two ways, by what both sides hold:

* **by repeats** (both sides ran ``bench --repeat`` with at least 2 repeats): a move is called when
  every repeat's p50 of one side lies beyond every repeat's p50 of the other, and the chance of
  that with no change (:func:`conformance.reporting.bench_repeats.chance_apart`, ``2 n! m! /
  (n + m)!``) is at most :data:`ALPHA`: 3 repeats a side is the least that can call a move
  (0.1), 2 and 3 cannot (0.2). Repeats are whole measurements, so their spread holds the drift
  between runs that one run's rounds do not see;
* **by rounds** (a side of one repeat): both sides have at least :data:`MIN_ROUNDS` rounds and
  their IQRs [q1, q3] do not overlap. This bound is the run's own: two runs of the same code can
  still differ by more (a machine's state between runs), which only repeats measure.
"""

from __future__ import annotations

import math

from conformance.reporting.bench_figures import BenchRow
from conformance.reporting.bench_repeats import chance_apart

MIN_ROUNDS = 5
"""The fewest rounds a side needs before :func:`moved` calls a move by rounds: with fewer, the
quartiles are those of 1-4 samples (3 rounds: q1 and q3 are interpolated between the three
values), and two runs of the same code land outside each other's IQR most of the time."""
ALPHA = 0.1
"""The largest chance of a no-change ordering at which :func:`moved` calls a move by repeats."""
MIN_REPEATS = 3
"""The fewest repeats a side that reach :data:`ALPHA` with as many on the other side."""


def _by_repeats(o: BenchRow, r: BenchRow) -> bool:
    return min(o.repeats, r.repeats) >= 2


def judgeable(o: BenchRow, r: BenchRow) -> bool:
    """Whether the pair's counts can support a move at all (by repeats or by rounds)."""
    if _by_repeats(o, r):
        return chance_apart(o.repeats, r.repeats) <= ALPHA
    return min(o.rounds, r.rounds) >= MIN_ROUNDS


def apart(o: BenchRow, r: BenchRow) -> bool:
    """The pair moved beyond its noise (module docstring); False when it cannot be judged."""
    if not judgeable(o, r):
        return False
    if _by_repeats(o, r):
        return max(o.repeat_p50s) < min(r.repeat_p50s) or max(r.repeat_p50s) < min(o.repeat_p50s)
    return o.q3 < r.q1 or r.q3 < o.q1


def _pairs(old: list[BenchRow], new: list[BenchRow]) -> list[tuple[BenchRow, BenchRow]]:
    before = {r.key: r for r in old}
    return [(before[r.key], r) for r in new
            if r.key in before and not r.refused and not before[r.key].refused]


def moved(old: list[BenchRow], new: list[BenchRow]) -> list[dict]:
    """Benchmarks present in both whose p50 moved beyond the noise (module docstring). Sorted by
    the size of the change, largest first; each with its scenario, bs label and the rounds and
    repeats of each side."""
    out = []
    for o, r in _pairs(old, new):
        if o.p50 and apart(o, r):
            out.append({"key": r.key, "planner": r.planner, "mode": r.mode, "bs": r.bs_label,
                        "scenario": r.scenario or "-", "old": o.p50, "new": r.p50,
                        "ratio": r.p50 / o.p50, "old_iqr": o.iqr, "new_iqr": r.iqr,
                        "old_rounds": o.rounds, "new_rounds": r.rounds,
                        "old_repeats": o.repeats, "new_repeats": r.repeats})
    return sorted(out, key=lambda m: -abs(math.log(m["ratio"])) if m["ratio"] > 0 else 0)


def _span(values: list[int]) -> str:
    return "-" if not values else str(min(values)) if min(values) == max(values) else \
        f"{min(values)}-{max(values)}"


def rounds_compared(old: list[BenchRow], new: list[BenchRow]) -> dict:
    """What :func:`moved` could judge: ``figures`` (present in both, neither refused), ``judged``
    (their counts support a move, :func:`judgeable`), the rounds and the repeats of each side
    (``old`` / ``new``, ``old_repeats`` / ``new_repeats``: the fewest and most, one number when all
    are equal, e.g. ``"3"`` or ``"3-15"``), ``min_rounds`` and ``min_repeats``."""
    pairs = _pairs(old, new)
    return {"figures": len(pairs), "judged": sum(1 for o, r in pairs if judgeable(o, r)),
            "old": _span([o.rounds for o, _ in pairs]), "new": _span([r.rounds for _, r in pairs]),
            "old_repeats": _span([o.repeats for o, _ in pairs]),
            "new_repeats": _span([r.repeats for _, r in pairs]),
            "min_rounds": MIN_ROUNDS, "min_repeats": MIN_REPEATS}
