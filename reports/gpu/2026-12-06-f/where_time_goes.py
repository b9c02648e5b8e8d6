"""Where a plan's device time goes at bs 4096: Nsight Compute over the two default planners and
their chain floors, one kernel launch each, three times, on the bench's ``serving`` workload.

Each call is checked byte for byte against the pure-Python planner (the floors write only the
seed slots) before the profiled range; the range is opened with ``cudaProfilerStart`` after five
warm calls of each, so that ``ncu --profile-from-start off`` sees only the twelve launches.

    ncu --profile-from-start off --set full -o OUT/bs4096 python3 reports/gpu/2026-12-06-f/where_time_goes.py
"""
import os
import sys

import torch

sys.path.insert(0, os.path.realpath(os.path.join(os.path.dirname(__file__), "..", "..", "..")))
from impls.offsets_planner.contract import OUTPUT_NAMES  # noqa: E402
from impls.offsets_planner.harness.sweeps import one_pass, one_pass_calls as c  # noqa: E402
from impls.offsets_planner.python_planner import launch as python_launch  # noqa: E402

BS = 4096
dev = torch.device("cuda", 0)
ROWS = (("chain floor triton (BLOCK 64, 2 warps)", c._triton_chain(64, 2)),
        ("chain floor numba (32 threads, pointers)", c._numba_chain(32, "pointers")),
        ("triton planner", c.current("triton")[2]),
        ("numba-cuda planner", c.current("numba-cuda")[2]))

base = one_pass.workload(BS, dev)
cpu = {k: v.cpu() if isinstance(v, torch.Tensor) else v for k, v in one_pass._copy(base).items()}
python_launch(**cpu)
want = {n: cpu[n] for n in OUTPUT_NAMES}
calls = []
for label, make in ROWS:
    kw = one_pass._copy(base)
    call = make(kw)
    for _ in range(5):
        call()
    torch.cuda.synchronize()
    names = OUTPUT_NAMES if "planner" in label else (OUTPUT_NAMES[2],)
    bad = [n for n in names if not torch.equal(kw[n].cpu(), want[n])]
    print(f"{label}: {'differs in ' + ', '.join(bad) if bad else 'same bytes as python'} "
          f"({', '.join(names)})", flush=True)
    calls.append((label, call))
torch.cuda.cudart().cudaProfilerStart()
for _ in range(3):
    for label, call in calls:
        call()
        torch.cuda.synchronize()
torch.cuda.cudart().cudaProfilerStop()
print("profiled: 3 rounds of", ", ".join(label for label, _ in calls))
