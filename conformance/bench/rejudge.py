"""Outputs re-judged while a benchmark's timed loop runs, between its rounds (untimed).

pytest-benchmark's pedantic runner times ``rounds`` rounds of ``iterations`` calls each;
:class:`conformance.bench.clocks.RoundClock` calls a :class:`RoundJudge` after every round's end
reading. There, outside the timed region:

* in ``fresh`` and ``varying-bs`` every entry of the request pool gets new contents
  (:func:`conformance.bench.workloads.refresh`) after every round, and a round has at most as many
  calls as the pool has entries: no call of the timed loop meets contents it met before, so a
  cache keyed on tensor identity or on a fingerprint of the inputs (flashinfer-bench-starter-kit#21)
  misses or returns stale outputs;
* in :data:`JUDGED_ROUNDS` rounds drawn at random from a seed the planner is not given (the last
  round always among them), the outputs of the round's last timed call are compared with the
  pure-Python planner's plan (spec section 5) for that call's inputs; then :data:`PROBES` more
  calls, each on new contents (in ``reused`` the one tensor set is rewritten in place first), are
  made through the timed call and judged the same way;
* in those rounds, one call drawn at random before the last
  (:class:`conformance.bench.call_tap.CallTap`: outputs poisoned just before it, copied just after
  it) is judged too, so a planner that tells the round's last call from the others
  (pytest-benchmark's runner frame) and skips the others is judged wrong.

So a planner correct for its first calls and wrong after (llm.c#851), one that writes a call's
outputs during the next call (a lazy output, gpu-mode/reference-kernels#162), one that skips every
other call (gpu-mode/reference-kernels#104) or one whose cache returns stale outputs after contents
change in place is judged wrong, and its figure refused. Outputs are read after a device-wide
synchronisation (the bound ``torch.cuda.synchronize``), so work left on another stream is judged
once done.

The judge's reference is ``plan_values`` of the corpus subject's pure-Python planner
(its package's ``python_planner`` module), called in this process. Every global of that module
and of this one (each helper ``plan_values`` calls through its module's globals:
``seed_positions``, ``request_offsets``, ``place_seeds``, ``finish``, ...), every builtin their code
reads, and the ``torch.Tensor`` methods the judge reads outputs with are on the watch list
(:func:`conformance.bench.clocks.watch_globals`, bound at this module's import, before any planner
is imported): a planner that rebinds one so that the reference agrees with its wrong outputs gets
every figure after it refused, as one that rebinds ``plan_values`` itself does.
"""

from __future__ import annotations

import os
import random
import sys
from collections.abc import Callable

import torch

from conformance.bench import clocks
from conformance.bench.workloads import POISON, refresh
from conformance.corpus.corpus_subject import contract as _contract
from conformance.corpus.corpus_subject import python_planner as _python_planner

OUTPUT_NAMES = _contract.OUTPUT_NAMES
REQUEST_INPUT_NAMES = _contract.REQUEST_INPUT_NAMES
SCALAR_NAMES = _contract.SCALAR_NAMES
SCALAR_OUTPUT_NAMES = _contract.SCALAR_OUTPUT_NAMES
TABLE_INPUT_NAMES = _contract.TABLE_INPUT_NAMES
plan_values = _python_planner.plan_values

JUDGED_ROUNDS = 3
"""Rounds (warm-up rounds included) after which outputs are judged; the last round always."""
PROBES = 2
"""Judged calls on new contents after each judged round: two, so that of two consecutive calls
one is an odd and one an even call."""


def reference_values(kw: dict, table: torch.Tensor, lut: torch.Tensor | None) -> tuple:
    """The pure-Python planner's six results (``plan_values``: verify offsets, write offsets,
    seeds, num_valid, enable, num_reqs) for launcher ``kw``'s request tensors and scalars,
    reading slots from ``table`` and ``lut`` (CPU copies of ``kw``'s, made once per loop)."""
    rpi, prefix, extend = (kw[n].tolist() for n in REQUEST_INPUT_NAMES)
    return plan_values(
        rpi, prefix, extend, lambda r, p: int(table[r, p]), lambda i: int(lut[i]),
        max_reqs=table.shape[0], max_seq_len=table.shape[1], lut_len=0 if lut is None else len(lut),
        **{n: kw[n] for n in SCALAR_NAMES})


def plan_mismatch(kw: dict, table: torch.Tensor | None = None,
                  lut: torch.Tensor | None = None) -> str | None:
    """None when the outputs in launcher ``kw`` equal the reference plan over their defined
    regions (spec section 5), else the first difference, e.g.
    ``out_write_offsets[3] = 7, the reference plans 9``. ``table`` / ``lut``: CPU copies of
    ``kw``'s (default: ``kw``'s own, read element by element)."""
    if table is None:
        table, lut = (kw[n] for n in TABLE_INPUT_NAMES)
    want = reference_values(kw, table, lut)
    for name, values in zip(OUTPUT_NAMES[:3], want[:3]):
        got = kw[name][: len(values)].tolist()
        if got != values:
            i = next(i for i, (g, w) in enumerate(zip(got, values)) if g != w)
            return f"{name}[{i}] = {got[i]}, the reference plans {values[i]}"
    for name, value in zip(SCALAR_OUTPUT_NAMES, want[3:]):
        if int(kw[name]) != value:
            return f"{name} = {int(kw[name])}, the reference plans {value}"
    return None


def replan_mismatch(call: Callable[[], object], kw: dict) -> str | None:
    """``kw``'s outputs filled with :data:`~conformance.bench.workloads.POISON`, ``call()`` made
    (it plans ``kw``), then :func:`plan_mismatch`; an exception raised on the way is the
    difference (``raised TYPE: message``)."""
    for name in OUTPUT_NAMES:
        kw[name].fill_(POISON)
    try:
        call()
        return plan_mismatch(kw)
    except Exception as exc:  # the planner raised, or its outputs cannot be read
        return f"raised {type(exc).__name__}: {plain_text(str(exc))}"


_COPIES: dict[tuple, torch.Tensor] = {}


def cpu_copy(tensor: torch.Tensor) -> torch.Tensor:
    """A CPU copy of ``tensor`` (the device's shared table or LUT, 512 MiB on the GPU), made once
    per tensor and contents: kept while its address, shape and version counter (which every
    in-place write bumps) are unchanged; two at most."""
    key = (str(tensor.device), tensor.data_ptr(), tuple(tensor.shape), tensor._version)
    if key not in _COPIES:
        if len(_COPIES) >= 2:
            _COPIES.clear()
        _COPIES[key] = tensor.detach().to("cpu", copy=True)
    return _COPIES[key]


def plain_text(text: str, limit: int = 200) -> str:
    """A planner's message made one short line of printable ASCII without ``|`` (it goes into
    table cells and terminals), ``...`` when cut."""
    kept = "".join(c if " " <= c <= "~" and c != "|" else "?" for c in text)
    return kept if len(kept) <= limit else kept[:limit] + "..."


class RoundJudge:
    """The between-rounds step of one benchmark (module docstring).

    Args:
        pool: the benchmark's request pool (:func:`conformance.bench.workloads.request_pool`).
        timed: the timed zero-argument call (the one pytest-benchmark runs).
        last: ``last[0]`` is the pool index of ``timed``'s latest entry
            (:func:`conformance.bench.modes.planner_call`).
        scenario: ``reused``, ``fresh`` or ``varying-bs``.
        total_rounds: warm-up rounds + timed rounds.
        outputs: whether ``timed`` writes outputs (not ``validate``).
        seed: the draw of judged rounds, tapped calls and new contents; default from
            ``os.urandom`` (reported in the benchmark's ``extra_info.judge_seed`` once the loop
            is over).
        tap: the timed call's :class:`conformance.bench.call_tap.CallTap` (eager and launch),
            told the judged rounds and ``iterations`` (calls per round); None: no tapped call.
    """

    def __init__(self, pool: list[dict], timed: Callable[[], object], last: list[int],
                 scenario: str, total_rounds: int, *, outputs: bool = True,
                 seed: int | None = None, tap=None, iterations: int = 1,
                 _urandom=os.urandom, _random=random.Random) -> None:
        # the real os.urandom and random.Random, captured at import (before any planner): a
        # planner that rebinds them cannot give the judge a seed or draws it predicts
        self.pool, self.timed, self.last, self.scenario = pool, timed, last, scenario
        self.outputs = outputs
        self.seed = int.from_bytes(_urandom(8), "little") if seed is None else seed
        rng = _random(self.seed)
        earlier = range(total_rounds - 1)
        self.judged = set(rng.sample(earlier, min(JUDGED_ROUNDS - 1, len(earlier))))
        self.judged.add(total_rounds - 1)
        self.tap = tap if outputs else None
        if self.tap is not None:
            self.tap.plan(iterations, self.judged, rng)
        self.generator = torch.Generator().manual_seed(self.seed)
        table, lut = (pool[0][n] for n in TABLE_INPUT_NAMES)
        self.table, self.lut = cpu_copy(table), None if lut is None else cpu_copy(lut)
        self.judgments = 0
        self.failure: str | None = None

    def __call__(self, round_index: int) -> None:
        if self.failure:
            return
        try:
            tapped = self.tap.take() if self.tap is not None else None
            if tapped is not None:
                _, call, entry, copied = tapped
                self._judge(f"call {call} of round {round_index} (drawn at random)",
                            dict(self.pool[entry], **copied))
                if self.failure:
                    return
            judged = self.outputs and round_index in self.judged
            if judged:
                self._judge(f"the last timed call of round {round_index}")
                if self.failure:
                    return
            if self.scenario != "reused":
                refresh(self.pool, self.generator)
            if not judged:
                return
            for probe in range(1, PROBES + 1):
                if self.scenario == "reused":
                    refresh(self.pool, self.generator)
                self.timed()
                self._judge(f"probe call {probe} after round {round_index} (new contents)")
                if self.failure:
                    return
        except Exception as exc:  # the planner raised, or its outputs cannot be read
            self.failure = f"re-judging raised {type(exc).__name__}: {plain_text(str(exc))}"

    def _judge(self, what: str, kw: dict | None = None) -> None:
        """Compare ``kw``'s outputs (default: the timed call's latest entry) with the reference
        plan for its inputs; the first difference becomes :attr:`failure`."""
        if clocks.CUDA:
            clocks.cuda_synchronize()
        self.judgments += 1
        kw = self.pool[self.last[0]] if kw is None else kw
        diff = plan_mismatch(kw, self.table, self.lut)
        if diff and not self.failure:
            self.failure = f"outputs wrong at {what}: {diff}"


# The judge and the reference it judges with reach their helpers, constants and builtins through
# their modules' globals: every one is watched, so that a planner that rebinds one (the reference's
# seed_positions made to plan no seed, say: the reference then agrees with a wrong plan) gets every
# figure after it refused. The torch callables the judge reads outputs with are watched too.
clocks.watch_globals(sys.modules[__name__], "RoundJudge.__call__", "RoundJudge._judge")
clocks.watch_globals(_python_planner)
clocks.watch(torch, "Tensor.tolist", "Tensor.fill_", "Tensor.__getitem__", "Tensor.__int__",
             "Tensor.__len__")
