"""Where an eager ``varying-bs`` call's time goes: host enqueue or the device.

For ``triton`` and ``numba-cuda`` (each planner's ``launch``) on the bench's pools (``reused``,
``fresh``, ``varying-bs`` at bs 4096, :func:`conformance.bench.workloads.request_pool`), after one
call per pool entry: ``host`` = wall us per call of 512 calls with no synchronisation inside the
loop (the enqueue rate, as long as the queue does not fill), ``synced`` = the same loop followed by
``torch.cuda.synchronize()``, per call, and ``device`` = CUDA-event us per call over the loop. Nine
repeats each; the median and the range are printed. If ``synced`` is well above ``host`` the
device is the bound (or the host blocks inside a call); if they agree the host is.

    python reports/gpu/2026-12-06-g/eager_split.py [--triton-only]  # from the repository root, on a GPU
"""
import os
import statistics
import sys
import time

import torch

ROOT = os.path.realpath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
sys.path.insert(0, ROOT)
from impls.offsets_planner import triton_planner  # noqa: E402  (first: the mode)
if "--triton-only" not in sys.argv:  # does importing the Numba planner slow Triton's launches?
    from impls.offsets_planner import numba_cuda_planner  # noqa: E402
from conformance.bench import workloads  # noqa: E402

BS, CALLS, REPEATS = 4096, 512, 9


def loop(launch, pool):
    n = len(pool)
    torch.cuda.synchronize()
    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    s.record()
    t0 = time.perf_counter()
    for i in range(CALLS):
        launch(**pool[i % n])
    t1 = time.perf_counter()
    e.record()
    torch.cuda.synchronize()
    t2 = time.perf_counter()
    return ((t1 - t0) * 1e6 / CALLS, (t2 - t0) * 1e6 / CALLS, s.elapsed_time(e) * 1e3 / CALLS)


if __name__ == "__main__":
    dev = torch.device("cuda", 0)
    kw = workloads.build(BS, workloads.spec_for("serving", "cuda"), dev)
    planners = [("triton", triton_planner.launch)]
    if "--triton-only" not in sys.argv:
        planners.append(("numba-cuda", numba_cuda_planner.launch))
    for name, launch in planners:
        for scenario in workloads.SCENARIOS:
            pool = workloads.request_pool(kw, scenario, seed=BS)
            for entry in pool:
                launch(**entry)
            rows = [loop(launch, pool) for _ in range(REPEATS)]
            cols = list(zip(*rows))
            text = "  ".join(f"{k} {statistics.median(c):6.2f} ({min(c):.2f}..{max(c):.2f})"
                             for k, c in zip(("host", "synced", "device"), cols))
            print(f"{name:10s} {scenario:10s} pool {len(pool):3d}  {text}")
