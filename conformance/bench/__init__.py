"""The benchmark suite of issue #5: every planner, every batch size, against framework floors.

``pytest conformance/bench`` (or ``python -m conformance bench``); collected only when named or
with ``--bench`` (:mod:`conformance.bench.plugin`). Modules: :mod:`~conformance.bench.workloads`
(serving-like inputs), :mod:`~conformance.bench.floors` (empty kernels, a trivial torch op),
:mod:`~conformance.bench.modes` (what each mode times, rounds), :mod:`~conformance.bench.summary_table`
(ratios, the terminal table), :mod:`~conformance.bench.cli` (the shortcut). Timing primitives:
:mod:`conformance.bench.timing`.
"""
