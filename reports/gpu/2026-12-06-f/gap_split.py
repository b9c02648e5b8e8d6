"""Which part of the Triton planner's launch holds its replay above the chain floor at bs 4096?
Replayed in turn with the floors and both current planners (``../2026-12-04-b/replay_rounds.py``):

* the chain floor in the planner's block size (``BLOCK`` 64 and 512, 8 warps: 256 threads), to
  see what 256-thread blocks cost the gather chain alone;
* the default design with ``slow_carry``: every scan program computes its carry from the request
  vectors (exact, more loads, no wait on another program), to see what the look-back's wait costs;
* the default design as the planner launches it (through ``plan_launch``: its replay is the same
  kernel, the host path differs).

Every planner row is checked byte for byte against the current Numba planner on the serving
workload and two out-of-contract draws, before and after its replays.

    python reports/gpu/2026-12-06-f/gap_split.py        # from the repository root, on a GPU
"""
import os
import sys

import torch

ROOT = os.path.realpath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
sys.path.insert(0, ROOT)
from impls.offsets_planner.harness.sweeps import one_pass_calls as c  # noqa: E402

sys.path.insert(0, os.path.join(ROOT, "reports", "gpu", "2026-12-04-b"))
import replay_rounds  # noqa: E402

DEFAULT = dict(tile=64, scan_tile=512, num_warps=8, joined=True, early_poll=True)
"""The Triton planner's design at bs 4096 (``DESIGNS[4096]`` and its flags)."""

if __name__ == "__main__":
    dev = torch.device("cuda", 0)
    rows = list(replay_rounds.floors_and_current())
    rows += [("triton", "floor 64w8", c._triton_chain(64, 8)),
             ("triton", "floor 512w8", c._triton_chain(512, 8)),
             ("triton", "design as planned", c._triton_candidate("roles-lookback", **DEFAULT)[2]),
             ("triton", "design slow carry",
              c._triton_candidate("roles-lookback", slow_carry=True, **DEFAULT)[2])]
    bad = replay_rounds.run({4096: rows}, dev)
    print(f"candidate rows that differ: {bad}")
    sys.exit(1 if bad else 0)
