"""Per-call cost of the validation memo, on the CPU: ``python -m impls.offsets_planner.harness.sweeps.memo_cost``.

The unbound ``triton`` and ``numba-cuda`` planners call :func:`impls.offsets_planner.validate_cache.lookup_args`
on every eager call (``launch(**kw)``): the buffer-set key (:func:`impls.offsets_planner.buffer_set.
stable_key_of`), the dict lookup, then the per-step request-tensor checks
(:meth:`impls.offsets_planner.buffer_set.BufferSet.plan_for`). This prints the wall-clock us per call of the
fastest of ``--repeat`` runs of ``--calls`` calls each (as :mod:`timeit`: on a shared machine
other processes only ever add time) of:

* ``reused``: the same 13 arguments every call (a graph-less server reusing its request tensors);
* ``fresh``: new request tensors (same bs) every call, the buffer set unchanged;
* ``varying-bs``: new request tensors with bs drawn from 1..4096;
* ``fresh, keyed path``: ``fresh`` with the fast path refused (the last buffer set forgotten
  before each call, which adds a list store): the Python key and checks, as before the fast path;
* ``key only`` / ``request checks only`` / ``call floor``: the parts of a keyed hit (the key of
  the ten buffer-set arguments; ``plan_for`` on the request tensors; an empty function of 13
  positional arguments), so that the sum says where the time goes;

and, for each, the ratio to ``call floor``. Workloads are the suite's (:mod:`conformance.bench.
workloads`, ``serving``, bs 64 unless ``--bs``), on the CPU unless ``--device cuda``: host time
either way (the memo reads host-side ``TensorImpl`` fields and launches nothing); the bench's
eager goal (``eager, reused ... vs the empty Triton launch``) is judged on the GPU.
"""

from __future__ import annotations

import argparse
import time

from conformance.bench import workloads


def _per_call_us(fn, pool: list[tuple], calls: int, repeat: int) -> float:
    n = len(pool)
    runs = []
    for _ in range(repeat):
        start = time.perf_counter()
        for i in range(calls):
            fn(*pool[i % n])
        runs.append((time.perf_counter() - start) / calls * 1e6)
    return min(runs)  # the least disturbed run (as timeit)


def _floor(*args) -> None:
    """An empty function taking the 13 arguments positionally: Python's own call cost."""


def main(argv: list[str] | None = None) -> int:
    """Print one line per measure: us per call (fastest run) and the ratio to the call floor."""
    parser = argparse.ArgumentParser(prog=f"python -m {__spec__.name if __spec__ else __name__}",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=20000)
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--bs", type=int, default=64)
    parser.add_argument("--device", default="cpu", help="cpu (default) or cuda: the tensors' device")
    args = parser.parse_args(argv)

    from impls.offsets_planner import validate_cache as vc
    from impls.offsets_planner.contract import ARGUMENT_NAMES, REQUEST_INPUT_NAMES
    from impls.offsets_planner.buffer_set import STABLE_NAMES

    spec = workloads.spec_for("serving", args.device)
    kw = workloads.build(4096, spec, args.device)
    small = workloads.build(args.bs, spec, args.device)
    as_args = lambda c: tuple(c[n] for n in ARGUMENT_NAMES)  # noqa: E731
    reused = [as_args(small)]
    fresh = [as_args(c) for c in workloads.request_pool(small, "fresh", size=16)]
    varying = [as_args(c) for c in workloads.request_pool(kw, "varying-bs", size=256, seed=1)]
    stable = [tuple(c[n] for n in STABLE_NAMES) for c in (small,)]
    requests = [tuple(c[n] for n in REQUEST_INPUT_NAMES)
                for c in workloads.request_pool(small, "fresh", size=16)]
    vc.clear()
    entry = vc.lookup(small)[1]
    for pool in (fresh, varying):  # the steady state: every buffer set and bs met once
        for a in pool:
            vc.lookup_args(*a)
    last = getattr(vc, "_LAST", [None])  # a tree before the fast path has none

    def keyed(*a):
        last[0] = None  # no fast-path candidate: the keyed path
        return vc.lookup_args(*a)

    measures = [
        ("call floor", _floor, reused),
        ("reused", vc.lookup_args, reused),
        ("fresh", vc.lookup_args, fresh),
        ("varying-bs", vc.lookup_args, varying),
        ("fresh, keyed path", keyed, fresh),
        ("key only", vc.stable_key_of, stable),
        ("request checks only", entry.plan_for, requests),
    ]
    floor = None
    from impls.offsets_planner.metadata_guard import AVAILABLE

    print(f"fast path (impls.offsets_planner.metadata_guard) available: {AVAILABLE}")
    print(f"validation memo, us per call (fastest of {args.repeat} x {args.calls} calls; "
          f"{args.device} tensors, bs {args.bs}, varying-bs 1..4096)")
    for name, fn, pool in measures:
        us = _per_call_us(fn, pool, args.calls, args.repeat)
        floor = us if floor is None else floor
        print(f"  {name:<22} {us:7.3f} us  ({us / floor:5.1f}x call floor)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
