"""Host cost of the per-call paths, on the CPU: ``python -m impls.offsets_planner.harness.sweeps.host_cost``.

Prints the wall-clock us per call of the fastest of ``--repeat`` runs of ``--calls`` calls each
(as :mod:`timeit`: on a shared machine other processes only ever add time) of:

* ``memo-hit varying-bs``: :func:`impls.offsets_planner.validate_cache.lookup` on a pool of fresh request tensors
  with bs drawn from 1..4096 (the buffer set found; the per-step checks run);
* ``bound check varying-bs``: :meth:`impls.offsets_planner.bound_plan.BoundPlan.check` on the same pool;
* ``python planner bs 4096 fresh``: :func:`impls.offsets_planner.python_planner.launch` with fresh tensors;
* ``numba set_batch varying-bs``: the numba-cuda driver path's per-call rewrite of its packed
  parameter cells (:class:`impls.offsets_planner.numba_packed_launch.PackedLaunch`), without the launch;
* ``eager signature floor``: calling an empty function with the launcher's keyword-only signature
  (spec section 3) as ``f(**kw)``: the part of an eager call no planner can avoid;
* ``triton host prep``: the Triton planner's per-call Python work before the kernel is invoked
  (the memo, the prepared launch and the argument tuple), with the kernel replaced by a no-op;
* ``triton-bound host prep``: the same for ``triton-bound`` called in the launcher's shape
  (:func:`impls.offsets_planner.bound_plan.bound_launcher`), which must cost no more than the unbound planner.

Workloads are the suite's (:mod:`conformance.bench.workloads`, ``serving``, on the CPU). The
figures are host work only; the suite (``python -m conformance bench``) judges the goals.
"""

from __future__ import annotations

import argparse
import time

from conformance.bench import workloads


def _per_call_us(fn, pool, calls: int, repeat: int) -> float:
    n = len(pool)
    runs = []
    for _ in range(repeat):
        start = time.perf_counter()
        for i in range(calls):
            fn(pool[i % n])
        runs.append((time.perf_counter() - start) / calls * 1e6)
    return min(runs)  # the least disturbed run: other processes only ever add time (as timeit)


def _signature(*, req_pool_indices, prefix_lens, extend_seq_lens, req_to_token,
               full_to_swa_index_mapping, out_verify_offsets_scratch, out_write_offsets,
               out_write_seed_slot_indices, out_verify_num_valid, out_verify_enable,
               out_write_num_valid_reqs, swa_window_size, verify_capacity) -> None:
    """An empty function with the launcher's signature: what ``launch(**kw)`` costs before any
    planner code runs."""


def main(argv: list[str] | None = None) -> int:
    """Print one line per measure (us per call, fastest run)."""
    parser = argparse.ArgumentParser(prog=f"python -m {__spec__.name if __spec__ else __name__}",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--only", default="", help="comma-separated measure prefixes")
    args = parser.parse_args(argv)

    import impls.offsets_planner
    from impls.offsets_planner import python_planner, validate_cache
    from impls.offsets_planner.contract import REQUEST_INPUT_NAMES
    from impls.offsets_planner.buffer_set import STABLE_NAMES

    spec = workloads.spec_for("serving", "cpu")
    kw = workloads.build(4096, spec, "cpu")
    varying = workloads.request_pool(kw, "varying-bs", size=256, seed=1)
    fresh = workloads.request_pool(kw, "fresh", size=16)
    names = REQUEST_INPUT_NAMES
    requests = [tuple(c[n] for n in names) for c in varying]  # as the suite's validate mode
    bound = impls.offsets_planner.bind(python_planner, **{n: kw[n] for n in STABLE_NAMES})

    def triton_prep():
        from impls.offsets_planner import triton_planner as tp

        calls = []
        tp._kernel = type("K", (), {"__getitem__": lambda self, grid: (
            lambda *a, **k: calls.append(None))})()
        return lambda c: tp.launch(**c)

    def triton_bound_prep():
        from impls.offsets_planner import triton_bound_planner as tb

        triton_prep()  # the same no-op kernel
        return lambda c: tb.launch(**c)

    def numba_cells():
        from impls.offsets_planner import numba_cuda_planner as nb

        packed = nb.packed_launch.PackedLaunch(*validate_cache.lookup(kw))
        return lambda r: packed.set_batch(r[0].shape[0], *r)

    measures = {
        "memo-hit varying-bs": (validate_cache.lookup, varying, args.calls),
        "bound check varying-bs": (lambda r: bound.check(*r), requests, args.calls),
        "python planner bs 4096 fresh": (lambda c: python_planner.launch(**c), fresh,
                                         max(args.calls // 100, 5)),
        "triton host prep varying-bs": (None, varying, args.calls),
        "triton-bound host prep varying-bs": (None, varying, args.calls),
        "numba set_batch varying-bs": (None, requests, args.calls),
        "eager signature floor": (lambda c: _signature(**c), varying, args.calls),
    }
    only = [p for p in args.only.split(",") if p]
    for label, (fn, pool, calls) in measures.items():
        if only and not any(label.startswith(p) for p in only):
            continue
        if fn is None:
            fn = (triton_bound_prep() if label.startswith("triton-bound") else triton_prep()
                  if label.startswith("triton") else numba_cells())
        for c in pool[:8]:
            fn(c)  # warm: validate the buffer set, build per-bs plans
        print(f"{label:32s} {_per_call_us(fn, pool, calls, args.repeat):10.2f} us/call", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
