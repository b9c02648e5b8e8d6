"""The bench's own clocks, bound when this module is imported, and the checks of a timed loop.

Imported by :mod:`conformance.bench.plugin` (a ``pytest_plugins`` entry), so before any planner is
imported (``impls.registry`` imports a ``module:attr`` planner at configure time): a planner that
rebinds ``time.perf_counter`` or ``torch.cuda.Event.elapsed_time`` at import (a published reward
hack: gpu-mode/reference-kernels#162) changes names the bench no longer reads.

* :func:`tampered`: which watched names (the clocks, the CUDA event methods, pytest-benchmark's
  runner and statistics) no longer hold what they held at import.
* :class:`RoundClock`: the timer handed to pytest-benchmark's pedantic runner; it wraps a mode's
  timer (:func:`conformance.bench.modes.timer_for`), records every round with the bound clock and
  the bound ``elapsed_time``, and calls a hook between rounds (after the end reading: untimed).
* :func:`loop_mismatch`: the recorded rounds against pytest-benchmark's statistics and against
  the wall clock of the whole loop (host ns, device-synchronised on a GPU).

What a planner running in the bench's process can still do (rebind this module's own names, say)
is outside what this module can see; README "Benchmarks" says so.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable

import torch
from pytest_benchmark import fixture as _pb_fixture
from pytest_benchmark import stats as _pb_stats

perf_counter = time.perf_counter
perf_counter_ns = time.perf_counter_ns
cuda_synchronize = torch.cuda.synchronize
elapsed_time = torch.cuda.Event.elapsed_time
monotonic_ns = time.monotonic_ns
"""The independent clock each round is cross-checked with (host ns)."""
CUDA = torch.cuda.is_available()
_SELF = sys.modules[__name__]

_WATCHED = (
    ("time.perf_counter", time, "perf_counter"),
    ("time.perf_counter_ns", time, "perf_counter_ns"),
    ("time.monotonic", time, "monotonic"),
    ("time.monotonic_ns", time, "monotonic_ns"),
    ("time.time", time, "time"),
    ("torch.cuda.synchronize", torch.cuda, "synchronize"),
    ("torch.cuda.Event", torch.cuda, "Event"),
    ("torch.cuda.Event.elapsed_time", torch.cuda.Event, "elapsed_time"),
    ("torch.cuda.Event.record", torch.cuda.Event, "record"),
    ("torch.cuda.Event.synchronize", torch.cuda.Event, "synchronize"),
    ("pytest_benchmark BenchmarkFixture._make_runner", _pb_fixture.BenchmarkFixture,
     "_make_runner"),
    ("pytest_benchmark BenchmarkFixture._raw_pedantic", _pb_fixture.BenchmarkFixture,
     "_raw_pedantic"),
    ("pytest_benchmark Stats.update", _pb_stats.Stats, "update"),
    ("pytest_benchmark Stats.median", _pb_stats.Stats, "median"),
    ("pytest_benchmark Stats.min", _pb_stats.Stats, "min"),
    *((f"{__name__}.{name}", _SELF, name)
      for name in ("perf_counter", "perf_counter_ns", "cuda_synchronize", "elapsed_time",
                   "monotonic_ns")),
)
_ORIGINALS = tuple(vars(owner).get(attr, getattr(owner, attr)) for _, owner, attr in _WATCHED)

MATCH_REL = 1e-6
"""Relative tolerance between a round as recorded here and as pytest-benchmark stored it."""
WALL_REL, WALL_ABS_S = 0.02, 50e-6
"""Host-timed rounds: a round's figure and its length by :data:`monotonic_ns` agree within 2 %
+ 50 us (the two readings of a bracket are taken one after the other)."""


def tampered() -> list[str]:
    """The watched names (module docstring) whose value is no longer the one bound at import."""
    return [name for (name, owner, attr), orig in zip(_WATCHED, _ORIGINALS)
            if vars(owner).get(attr, getattr(owner, attr, None)) is not orig]


def synced_ns() -> int:
    """The bound ``perf_counter_ns`` after the bound ``torch.cuda.synchronize()`` (with CUDA):
    host ns that include every stream's queued work."""
    if CUDA:
        cuda_synchronize()
    return perf_counter_ns()


class RoundClock:
    """A pytest-benchmark timer (``benchmark._timer``) that records each round it brackets.

    ``base`` is the mode's timer (seconds, or :class:`conformance.bench.timing.EventClock`'s
    marks); every call returns ``base()`` unchanged. Calls come in pairs (start, end) per round,
    warm-up rounds included. After each end call, ``between(round_index)`` runs; its host time is
    kept in ``between_ns`` so the wall-clock check leaves it out.
    """

    def __init__(self, base: Callable[[], object],
                 between: Callable[[int], None] | None = None) -> None:
        self.base, self.between = base, between
        self.values: list[object] = []
        self.wall_ns: list[int] = []
        self.between_ns = 0
        self.__name__ = getattr(base, "__name__", "timer")

    def __call__(self):
        value = self.base()
        self.wall_ns.append(monotonic_ns())
        self.values.append(value)
        if len(self.values) % 2 == 0 and self.between is not None:
            t0 = perf_counter_ns()
            self.between(len(self.values) // 2 - 1)
            self.between_ns += perf_counter_ns() - t0
        return value

    def rounds_s(self) -> list[float]:
        """Seconds of every complete round, from the bound clock (host timers) or the bound
        ``Event.elapsed_time`` (event marks)."""
        out = []
        for start, end in zip(self.values[0::2], self.values[1::2]):
            if hasattr(start, "event"):
                end.event.synchronize()
                out.append(elapsed_time(start.event, end.event) * 1e-3)
            else:
                out.append(float(end) - float(start))
        return out


def loop_mismatch(clock: RoundClock, stored_per_call_s: list[float], iterations: int,
                  wall_ns: int, host_timed: bool) -> str | None:
    """Why the loop's figures cannot be trusted, or None.

    Checks: pytest-benchmark's stored rounds equal the rounds as the bound clocks give them
    (statistics not rewritten); for host-timed modes (``eager``, ``validate``, ``launch``: host
    wall time, device-synchronised on a GPU), each round's figure equals its length by the
    independent :data:`monotonic_ns` (a timer that runs slow or fast shows here, on the CPU too);
    for every mode, the rounds add up to no more than the wall time of the whole loop. ``replay``
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
        for i, figure in enumerate(rounds):
            wall_round = (marks[2 * i + 1] - marks[2 * i]) * 1e-9
            if abs(figure - wall_round) > WALL_REL * wall_round + WALL_ABS_S:
                return (f"wall clock: round {i} is {figure * 1e6:.1f} us by the timer, "
                        f"{wall_round * 1e6:.1f} us by the wall clock")
    wall = (wall_ns - clock.between_ns) * 1e-9
    total = sum(rounds)
    if total > wall * (1 + WALL_REL) + WALL_ABS_S:
        return (f"wall clock: the rounds add up to {total * 1e3:.3f} ms, more than the "
                f"{wall * 1e3:.3f} ms the whole loop took")
    return None
