"""Eager cost of a planner called in the launcher's shape: ``python -m impls.offsets_planner.harness.sweeps.launcher_shape``.

A server that picks a planner by name calls ``launch(**kw)`` (spec section 3) with new request
tensors each step. This prints, per planner, the wall-clock us per call of ``launch(**kw)`` over
the suite's ``varying-bs`` pool (:func:`conformance.bench.workloads.request_pool`: fresh request
tensors, bs drawn from 1..``--bs``, one buffer set), the fastest of ``--repeat`` rounds of one pass
over the pool (as :mod:`timeit`: other processes only ever add time), each round bracketed by
:func:`conformance.bench.timing.synced_perf_counter` so queued device work is paid for; then each
planner's ratio to the first one named. On a GPU the kernels are real; on the CPU they run in
Triton's interpreter / Numba's simulator, and the ratio mostly says the interpreter's cost.

The ``-bound`` planners (:func:`impls.offsets_planner.bound_plan.bound_launcher`) must cost no more than the
planner they bind: ``--planner triton --planner triton-bound``.
"""

from __future__ import annotations

import argparse

from conformance.bench import workloads
from conformance.bench.timing import synced_perf_counter


def per_call_us(launch, pool: list[dict], repeat: int) -> float:
    """Fastest of ``repeat`` rounds of ``launch(**c)`` for every ``c`` of ``pool`` (us per call)."""
    for c in pool[:8]:
        launch(**c)  # warm: bind, compile, per-bs plans
    best = float("inf")
    for _ in range(repeat):
        start = synced_perf_counter()
        for c in pool:
            launch(**c)
        best = min(best, (synced_perf_counter() - start) / len(pool) * 1e6)
    return best


def main(argv: list[str] | None = None) -> int:
    """Print one line per planner (us per call, ratio to the first planner)."""
    parser = argparse.ArgumentParser(prog=f"python -m {__spec__.name if __spec__ else __name__}",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--planner", action="append", default=[], metavar="NAME")
    parser.add_argument("--bs", type=int, default=1024)
    parser.add_argument("--pool", type=int, default=256, help="calls per round")
    parser.add_argument("--repeat", type=int, default=20)
    args = parser.parse_args(argv)
    from impls.offsets_planner.registry import availability, get_planner

    names = args.planner or ["triton", "triton-bound"]
    device = availability(names[0]).device
    kw = workloads.build(args.bs, workloads.spec_for("serving", device), device)
    pool = workloads.request_pool(kw, "varying-bs", size=args.pool, seed=1)
    first = None
    for name in names:
        us = per_call_us(get_planner(name), pool, args.repeat)
        first = first or us
        print(f"{name:20s} {availability(name).mode:12s} {us:9.2f} us/call  {us / first:5.2f}x",
              flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
