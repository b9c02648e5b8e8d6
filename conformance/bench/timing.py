"""Timing primitives for GPU planners' benchmarks, shared by every benchmark script.

All times are microseconds (us) per call. Each measurement is taken ``repeats`` times after a
warm-up and summarised as pytest-benchmark's ``Stats`` (:func:`summarize`: median, minimum,
quartiles), the statistics type the suite's JSON holds too; report the median and judge
differences against the IQR.

* :func:`device_time` — CUDA events around many back-to-back eager calls (device time per call
  when the GPU is the bottleneck, else the host's launch rate).
* :func:`graph_replay_time` — capture ``calls_per_graph`` calls into one CUDA graph and time
  replays with CUDA events. With ``prefill=True`` the stream is first held by a sleep kernel so
  that every replay is queued before the first runs: the events then see device time only, not
  the host's enqueue rate.
* Clocks are :mod:`conformance.bench.clocks`' (bound before any planner is imported); the
  timers handed to pytest-benchmark (:func:`synced_perf_counter`, :class:`EventClock`) hold the
  real clock functions as default arguments, and this module's clock names are watched
  (:func:`conformance.bench.clocks.watch`): a planner that rebinds one gets every figure refused.
* :func:`host_time` — wall-clock per call of a host function (validation, an eager launch),
  synchronising once per batch so that queued GPU work is paid for.
* :func:`synced_perf_counter` and :class:`EventClock` — the same two methods as timers for
  pytest-benchmark's pedantic mode (``benchmark.pedantic(fn, iterations=N, ...)`` with
  ``@pytest.mark.benchmark(timer=...)``): each round of N calls is bracketed by two timer calls.
"""

from __future__ import annotations

import sys
from collections.abc import Callable

import torch
from pytest_benchmark.stats import Stats

from conformance.bench import clocks
from conformance.bench.clocks import cuda_synchronize, perf_counter


def summarize(samples_us: list[float]) -> Stats:
    """pytest-benchmark's :class:`~pytest_benchmark.stats.Stats` of per-call times in us (the one
    statistics type of the suite and the sweeps: ``median``, ``min``, ``q1``, ``q3``, ``iqr``,
    ``rounds``), at least one sample."""
    stats = Stats()
    for sample in samples_us:
        stats.update(sample)
    return stats


def describe(stats: Stats) -> str:
    """``p50 us (min, IQR, n)`` of a :func:`summarize` result."""
    return f"{stats.median:.2f} us (min {stats.min:.2f}, IQR {stats.iqr:.2f}, n={stats.rounds})"


def host_time(fn: Callable[[], object], *, calls: int = 500, warmup: int = 50,
              repeats: int = 15, sync: bool = True) -> Stats:
    """Wall-clock us per ``fn()`` call: ``repeats`` batches of ``calls`` calls after ``warmup``.

    With ``sync`` (and CUDA present) each batch ends with ``torch.cuda.synchronize()``, so an
    eager launch's device work is included whenever the GPU, not the host, is the bottleneck.
    """
    do_sync = sync and torch.cuda.is_available()
    for _ in range(warmup):
        fn()
    if do_sync:
        torch.cuda.synchronize()
    samples = []
    for _ in range(repeats):
        t0 = perf_counter()
        for _ in range(calls):
            fn()
        if do_sync:
            torch.cuda.synchronize()
        samples.append((perf_counter() - t0) * 1e6 / calls)
    return summarize(samples)


def device_time(fn: Callable[[], object], *, calls: int = 200, warmup: int = 20,
                repeats: int = 15) -> Stats:
    """CUDA-event us per eager ``fn()`` call over ``calls`` back-to-back calls on the current stream."""
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    samples = []
    for _ in range(repeats):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(calls):
            fn()
        end.record()
        end.synchronize()
        samples.append(start.elapsed_time(end) * 1e3 / calls)
    return summarize(samples)


def capture(fn: Callable[[], object], calls_per_graph: int = 1, warmup: int = 3) -> torch.cuda.CUDAGraph:
    """A CUDA graph of ``calls_per_graph`` calls of ``fn`` (warmed up on a side stream first)."""
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(warmup):
            fn()
    torch.cuda.current_stream().wait_stream(side)
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        for _ in range(calls_per_graph):
            fn()
    torch.cuda.synchronize()
    return graph


def graph_replay_time(fn: Callable[[], object], *, calls_per_graph: int = 1, replays: int = 100,
                      warmup: int = 10, repeats: int = 15, prefill: bool = True,
                      after_capture: Callable[[], object] | None = None) -> Stats:
    """CUDA-event us per captured ``fn()`` call, over ``replays`` replays of one graph.

    ``prefill`` holds the stream with ``torch.cuda._sleep`` before the start event so that all
    replays are queued when the first one starts (device time, not host enqueue rate).
    ``after_capture``, when given, runs once between the capture and the first replay (eagerly,
    outside the graph): a server's refill of the captured input tensors in place, say.
    """
    graph = capture(fn, calls_per_graph)
    if after_capture is not None:
        after_capture()
        torch.cuda.synchronize()
    for _ in range(warmup):
        graph.replay()
    torch.cuda.synchronize()
    sleep_cycles = int(replays * 20e-6 * 2.0e9)  # ~20 us of host enqueue per replay at ~2 GHz
    samples = []
    for _ in range(repeats):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        if prefill:
            torch.cuda._sleep(sleep_cycles)
        start.record()
        for _ in range(replays):
            graph.replay()
        end.record()
        end.synchronize()
        samples.append(start.elapsed_time(end) * 1e3 / (replays * calls_per_graph))
    return summarize(samples)


def synced_perf_counter(_clock=perf_counter, _sync=cuda_synchronize, _cuda=clocks.CUDA) -> float:
    """``perf_counter()`` (seconds) after ``torch.cuda.synchronize()`` when CUDA is present: the
    real functions, captured when this module is imported (no rebinding of a name reaches them).

    As a pytest-benchmark timer it makes a round's wall time include the device work the round
    queued, as :func:`host_time` does (the sync costs a few us per round, not per call).
    """
    if _cuda:
        _sync()
    return _clock()


class _Mark(float):
    """A timestamp whose difference with the previous mark is the CUDA-event elapsed time."""

    event: object

    def __sub__(self, other):  # end - start, as pytest-benchmark's runner computes a round
        if isinstance(other, _Mark):
            self.event.synchronize()
            return other.event.elapsed_time(self.event) * 1e-3
        return float(self) - float(other)


class EventClock:
    """A pytest-benchmark timer (seconds) that measures a round with CUDA events.

    Called in pairs, as the pedantic runner does (``start = timer(); N calls; end = timer()``):
    the start call first holds the stream with ``torch.cuda._sleep`` long enough for the host to
    queue ``calls`` calls (about 20 us each, as :func:`graph_replay_time`), then records an event;
    the end call records an event; ``end - start`` is the device time between them. Use it for
    graph replays: the figure is device time per replay, not the host's enqueue rate.

    ``event`` is the event class (default: the real ``torch.cuda.Event``, captured when this
    module is imported; a test passes a stand-in).
    """

    def __init__(self, calls: int, prefill: bool = True, event=torch.cuda.Event) -> None:
        self.sleep_cycles = int(calls * 20e-6 * 2.0e9) if prefill else 0
        self._started, self._event = False, event
        self.__name__ = "EventClock"  # pytest-benchmark stores the timer's name in the JSON

    def __call__(self, _clock=perf_counter) -> float:
        if not self._started and self.sleep_cycles:
            torch.cuda._sleep(self.sleep_cycles)
        event = self._event(enable_timing=True)
        event.record()
        mark = _Mark(_clock())
        mark.event = event
        self._started = not self._started
        return mark


clocks.watch(sys.modules[__name__], "perf_counter", "cuda_synchronize", "synced_perf_counter",
             "EventClock", "_Mark")
