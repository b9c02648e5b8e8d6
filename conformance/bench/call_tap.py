"""One call inside a judged round whose outputs are judged: a call the planner cannot tell apart.

pytest-benchmark's runner makes a round's ``iterations`` calls from a loop whose range and index a
planner can read (``sys._getframe``: ``loops_range`` and ``_`` in its ``runner`` frame); a judge
that read only the round's last call (:class:`conformance.bench.rejudge.RoundJudge`) would let a
planner compute on that call alone and skip the others, its figure a fraction of the honest one.

So in each judged round :class:`CallTap` draws a call ``k`` in ``0 .. iterations - 2`` from the
judge's random generator (seeded from ``os.urandom``, not given to the planner), and, as the
timed call steps through its request pool (:func:`conformance.bench.modes.planner_call`):

* just before call ``k``, fills every output with :data:`conformance.bench.workloads.POISON`
  (otherwise, with the one tensor set of ``reused``, the outputs a skipped call leaves are still
  right: the contents do not change within a round);
* just after call ``k`` (before call ``k + 1``), copies every output.

After the round the judge compares the copy with the reference plan for call ``k``'s inputs
(contents change only between rounds). The tap's own time, device-synchronised on a GPU, is left
out of the round (:class:`conformance.bench.clocks.RoundClock` subtracts it from the round's end
reading, :func:`conformance.bench.clocks.loop_mismatch` from the wall clock); the device-wide
synchronisations drain the queue mid-round, a few us on a GPU, in judged rounds only.

Host modes that write outputs only (``eager``, ``launch``): ``replay`` runs no Python per call,
``validate`` writes no outputs. What it does not see: a planner that reads the tap's draw on the
heap, or that checks its outputs for the poison value before deciding to compute (README
"Benchmarks").
"""

from __future__ import annotations

import random
import sys
import time

import torch

from conformance.bench import clocks
from conformance.bench.workloads import POISON
from conformance.corpus.corpus_subject import contract as _contract

OUTPUT_NAMES = _contract.OUTPUT_NAMES


class CallTap:
    """The poison-and-copy step of one benchmark's judged rounds (module docstring).

    Args:
        pool: the benchmark's request pool (:func:`conformance.bench.workloads.request_pool`);
            every entry shares one set of output tensors.

    :meth:`plan` (by the judge) sets the rounds and the generator; until then nothing is armed.
    """

    def __init__(self, pool: list[dict]) -> None:
        self.pool = pool
        self.iterations, self.judged, self.rng = 1, frozenset(), random.Random(0)
        self.armed = False
        self.target: int | None = None
        self.count = self.excluded = 0
        self.entry: int | None = None
        self.copy: dict | None = None
        self.round: int | None = None

    def plan(self, iterations: int, judged: set[int], rng: random.Random) -> None:
        """Tap rounds ``judged`` (indices over warm-up and timed rounds) of ``iterations`` calls,
        drawing each round's call from ``rng``."""
        self.iterations, self.judged, self.rng = iterations, frozenset(judged), rng

    def begin(self, round_index: int) -> None:
        """Before round ``round_index``'s start reading: draw its call, or stay disarmed."""
        self.count = self.excluded = 0
        self.entry = self.copy = None
        self.round = round_index
        tapped = round_index in self.judged and self.iterations > 1
        self.target = self.rng.randrange(self.iterations - 1) if tapped else None
        self.armed = tapped

    def step(self, index: int) -> None:
        """Before the round's next call, on pool entry ``index`` (the timed call's cycle)."""
        j, self.count = self.count, self.count + 1
        if j == self.target:
            self.entry = index
            self._untimed(self._poison)
        elif self.target is not None and j == self.target + 1:
            self.armed = False
            self._untimed(self._copy)

    def end(self) -> int:
        """At the round's end reading: disarm; the ns the tap spent inside the round."""
        self.armed = False
        excluded, self.excluded = self.excluded, 0
        return excluded

    def take(self) -> tuple[int, int, int, dict] | None:
        """(round, call, pool entry, copied outputs) of the round just ended, once; or None."""
        if self.copy is None:
            return None
        out = (self.round, self.target, self.entry, self.copy)
        self.copy = None
        return out

    def _poison(self, _fill=torch.Tensor.fill_) -> None:
        kw = self.pool[self.entry]
        for name in OUTPUT_NAMES:
            _fill(kw[name], POISON)

    def _copy(self, _clone=torch.Tensor.clone) -> None:
        kw = self.pool[self.entry]
        self.copy = {name: _clone(kw[name]) for name in OUTPUT_NAMES}

    def _untimed(self, action, _sync=torch.cuda.synchronize, _ns=time.perf_counter_ns,
                 _cuda=clocks.CUDA) -> None:
        """``action()`` between two device-wide synchronisations, its ns added to the round's
        excluded time (the real functions, captured when this module is imported)."""
        if _cuda:
            _sync()
        t0 = _ns()
        action()
        if _cuda:
            _sync()
        self.excluded += _ns() - t0


clocks.watch(sys.modules[__name__], "CallTap", "POISON", "OUTPUT_NAMES",
             *(f"CallTap.{m}" for m in ("plan", "begin", "step", "end", "take", "_poison", "_copy",
                                        "_untimed")))
