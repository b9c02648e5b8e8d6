"""The offsets planner's design sweeps, each run as ``python -m impls.offsets_planner.harness.sweeps.<name>``:

* ``one_pass`` (with ``one_pass_calls``): the one-pass candidate kernels against the shipped planners;
* ``triton_sweep`` / ``numba_sweep``: the launch configurations of the Triton / Numba kernels;
* ``host_cost``, ``memo_cost``, ``launcher_shape``: the host side of a call (validation memo,
  bound plans, the launcher's own shape).

They time with the benchmark suite's clocks and workloads (:mod:`conformance.bench`).
"""
