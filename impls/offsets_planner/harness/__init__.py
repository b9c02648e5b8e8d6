"""The offsets planner's own harness-side tools: they use the harness (``conformance``), which no
other module of this package does (``tests/test_layout.py``).

* :mod:`impls.offsets_planner.harness.sweeps`: the design sweeps of this planner's kernels.
"""
