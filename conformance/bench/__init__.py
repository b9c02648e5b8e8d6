"""The benchmark suite: every planner, every batch size, every scenario, against framework floors.

``pytest conformance/bench`` (or ``python -m conformance bench``); collected only when named or
with ``--bench`` (:mod:`conformance.bench.plugin`). Modules: :mod:`~conformance.bench.workloads`
(serving-like inputs and the scenarios ``reused``, ``fresh``, ``varying-bs``),
:mod:`~conformance.bench.floors` (empty kernels, a trivial torch op; their kernel modules bound in
:mod:`~conformance.bench.floor_modules`), :mod:`~conformance.bench.chain_floors` (dependent-load
chain kernels in :mod:`~conformance.bench.chain_triton` and :mod:`~conformance.bench.chain_numba`),
:mod:`~conformance.bench.modes` (what each mode times, rounds), :mod:`~conformance.bench.summary_table`
(ratios, the terminal table), :mod:`~conformance.bench.goals` (the serving goals as ratios),
:mod:`~conformance.bench.cli` (the shortcut). Timing primitives: :mod:`conformance.bench.timing`.
What keeps a figure honest: :mod:`~conformance.bench.clocks` (clocks bound before any planner is
imported, the tamper and wall-clock checks), :mod:`~conformance.bench.rejudge` (outputs re-judged
between rounds on new contents), :mod:`~conformance.bench.refusal` (a failed check refuses the
figure, with its reason, everywhere it would be shown).
"""
