"""The entries planner's own harness-side tools: they use the harness (``conformance``), which no
other module of this package does (``tests/test_layout.py``).

* :mod:`impls.entries_planner.harness.entries_workload`: serving-like steps for its benchmark,
  with the offsets planner's inputs of the same step;
* :mod:`impls.entries_planner.harness.entries` (with ``entries_rows``, ``entries_calls``,
  ``entries_report``): its benchmark sweep, ``python -m impls.entries_planner.harness.entries --out DIR``.
"""
