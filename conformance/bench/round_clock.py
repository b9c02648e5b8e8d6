"""A timed loop's rounds (:mod:`conformance.bench.clocks` binds and watches these names):

* :class:`RoundClock`: the timer handed to pytest-benchmark's pedantic runner; it wraps a mode's
  timer (:func:`conformance.bench.modes.timer_for`), brackets every reading with the real
  ``time.monotonic_ns`` (a default argument, bound when this module is imported, before any
  planner is), calls a hook between rounds (after the end reading: untimed), and leaves out of a
  round the time a :class:`conformance.bench.call_tap.CallTap` spent inside it.
* :func:`loop_mismatch`: the recorded rounds against pytest-benchmark's statistics and against
  the wall clock of the whole loop (host ns, device-synchronised on a GPU); a round that is not a
  finite, non-negative time (a NaN or inf timer) is refused.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from math import isfinite

import torch

MATCH_REL = 1e-6
"""Relative tolerance between a round as recorded here and as pytest-benchmark stored it."""
WALL_REL, WALL_ABS_S = 0.02, 50e-6
"""Host-timed rounds: a round's figure and its length by
:data:`conformance.bench.clocks.monotonic_ns` agree within 2 % + 50 us (the two readings of a
bracket are taken one after the other)."""


class RoundClock:
    """A pytest-benchmark timer (``benchmark._timer``) that records each round it brackets.

    ``base`` is the mode's timer (seconds, or :class:`conformance.bench.timing.EventClock`'s
    marks); every call returns ``base()``. Calls come in pairs (start, end) per round, warm-up
    rounds included. After each end call, ``between(round_index)`` runs; its host time is kept in
    ``between_ns`` so the wall-clock check leaves it out.

    ``tap`` (a :class:`conformance.bench.call_tap.CallTap`, host timers only) is told a round
    begins before its start reading (``tap.begin(round_index)``) and ends at its end reading
    (``tap.end()``: the ns it spent inside the round); those ns are subtracted from the end
    reading (seconds) and kept per round in ``excluded_ns``, which :func:`loop_mismatch` leaves
    out of the wall clock too.
    """

    def __init__(self, base: Callable[[], object],
                 between: Callable[[int], None] | None = None, tap=None) -> None:
        self.base, self.between, self.tap = base, between, tap
        self.values: list[object] = []
        self.wall_ns: list[int] = []
        self.excluded_ns: list[int] = []
        self.between_ns = 0
        self.__name__ = getattr(base, "__name__", "timer")

    def __call__(self, _wall=time.monotonic_ns, _ns=time.perf_counter_ns):
        start = len(self.values) % 2 == 0
        if start and self.tap is not None:
            self.tap.begin(len(self.values) // 2)
        value = self.base()
        if not start and self.tap is not None:
            excluded = self.tap.end()
            if excluded and not hasattr(value, "event"):
                value = value - excluded * 1e-9
            self.excluded_ns.append(excluded)
        self.wall_ns.append(_wall())  # the independent bracket: the real clock, captured at import
        self.values.append(value)
        if not start and self.between is not None:
            t0 = _ns()
            self.between(len(self.values) // 2 - 1)
            self.between_ns += _ns() - t0
        return value

    def rounds_s(self, _elapsed=torch.cuda.Event.elapsed_time) -> list[float]:
        """Seconds of every complete round, from the timer's values (host timers) or the real
        ``Event.elapsed_time`` captured at import (event marks)."""
        out = []
        for start, end in zip(self.values[0::2], self.values[1::2]):
            if hasattr(start, "event"):
                end.event.synchronize()
                out.append(_elapsed(start.event, end.event) * 1e-3)
            else:
                out.append(float(end) - float(start))
        return out


def loop_mismatch(clock: RoundClock, stored_per_call_s: list[float], iterations: int,
                  wall_ns: int, host_timed: bool) -> str | None:
    """Why the loop's figures cannot be trusted, or None.

    Checks: pytest-benchmark's stored rounds equal the rounds as the bound clocks give them
    (statistics not rewritten); for host-timed modes (``eager``, ``validate``, ``launch``: host
    wall time, device-synchronised on a GPU), each round's figure equals its length by the
    independent :data:`conformance.bench.clocks.monotonic_ns` on most rounds (a timer that runs slow or fast shows on
    every round, on the CPU too; a round during which the process was descheduled between the two
    readings of its bracket is off alone);
    for every mode, the rounds add up to no more than the wall time of the whole loop. Every round
    and every stored figure must be a finite, non-negative time first: a NaN compares False with
    everything, so a NaN round would pass each check after it. ``replay``
    rounds are CUDA-event device time after a prefill sleep
    (:class:`conformance.bench.timing.EventClock`), so only that bound applies to them; their
    stored figures are recomputed with the bound ``Event.elapsed_time``.

    Args:
        clock: the loop's :class:`RoundClock`.
        stored_per_call_s: pytest-benchmark's ``stats.data`` (seconds per call, timed rounds).
        iterations: calls per round.
        wall_ns: host ns around the whole pedantic call, device-synchronised at both ends.
        host_timed: whether the figure is host wall time.
    """
    rounds = clock.rounds_s()
    for what, values in (("the bench's clock", rounds), ("the results", stored_per_call_s)):
        bad = next(((i, v) for i, v in enumerate(values) if not (isfinite(v) and v >= 0)), None)
        if bad is not None:
            return (f"statistics: round {bad[0]} is {bad[1]!r} s by {what}: not a finite, "
                    "non-negative time")
    excluded = list(clock.excluded_ns) + [0] * (len(rounds) - len(clock.excluded_ns))
    timed = rounds[len(rounds) - len(stored_per_call_s):] if stored_per_call_s else []
    if len(timed) != len(stored_per_call_s):
        return (f"statistics: {len(stored_per_call_s)} rounds stored, {len(timed)} timed by the "
                "bench's clock")
    for i, (own, stored) in enumerate(zip(timed, stored_per_call_s)):
        if abs(own - stored * iterations) > MATCH_REL * max(abs(own), 1e-12) + 1e-9:
            return (f"statistics: round {i} is {stored * iterations * 1e6:.3f} us in the results, "
                    f"{own * 1e6:.3f} us by the bench's own clock")
    if host_timed:
        marks = clock.wall_ns
        off = [(i, figure, (marks[2 * i + 1] - marks[2 * i] - excluded[i]) * 1e-9)
               for i, figure in enumerate(rounds)]
        off = [(i, f, w) for i, f, w in off if abs(f - w) > WALL_REL * w + WALL_ABS_S]
        # A timer that runs slow or fast is off on every round; a process descheduled between
        # the two readings of one bracket is off on that round alone: a majority decides.
        if off and 2 * len(off) > len(rounds):
            i, figure, wall_round = off[0]
            return (f"wall clock: {len(off)} of {len(rounds)} rounds disagree; round {i} is "
                    f"{figure * 1e6:.1f} us by the timer, {wall_round * 1e6:.1f} us by the wall "
                    "clock")
    wall = (wall_ns - clock.between_ns - sum(excluded)) * 1e-9
    total = sum(rounds)
    if total > wall * (1 + WALL_REL) + WALL_ABS_S:
        return (f"wall clock: the rounds add up to {total * 1e3:.3f} ms, more than the "
                f"{wall * 1e3:.3f} ms the whole loop took")
    return None
