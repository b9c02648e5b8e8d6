"""Raw-pointer against Numba-array kernel parameters, at bs 512, 1024 and 4096: the Numba
planner (raw pointers), its kernels with Numba arrays, the chain floors both ways and Triton's,
each graph replayed in turn (9 rounds of 200 replays behind a sleep kernel), every candidate first
checked byte for byte against the current planner (the serving workload and two out-of-contract
draws, and again after the replays).

    python reports/gpu/2026-12-04-b/pointers.py        # from the repository root, on a GPU
"""
import sys

import torch

from impls.offsets_planner.harness.sweeps import one_pass_calls as c

import replay_rounds  # this folder's

dev = torch.device("cuda", 0)
N, T = c._numba_candidate, c._triton_candidate
ROWS = {
    bs: [("numba-cuda", "current (pointers)", c.current("numba-cuda")[2]),
         ("triton", "current", c.current("triton")[2]),
         ("numba-cuda", "floor 32 arrays", c._numba_chain(32)),
         ("numba-cuda", "floor 32 pointers", c._numba_chain(32, "pointers")),
         ("numba-cuda", "floor 64 pointers", c._numba_chain(64, "pointers")),
         ("triton", "floor 32w1", c._triton_chain(32, 1))]
    + ([("numba-cuda", "roles-lookback 256/256 fixed, arrays", N("roles-lookback", threads=256, chunk=256, fixed_chunk=True, pointers=False)[2]),
        ("numba-cuda", "roles-lookback 256/256 fixed, pointers", N("roles-lookback", threads=256, chunk=256, fixed_chunk=True)[2]),
        ("numba-cuda", "roles-lookback 512/512 fixed, pointers", N("roles-lookback", threads=512, chunk=512, fixed_chunk=True)[2]),
        ("numba-cuda", "warp-lookback 128, pointers", N("warp-lookback", chunk=128)[2])]
       if bs == 4096 else
       [("numba-cuda", "roles 512/512 2 scans, arrays", N("roles", threads=512, chunk=512, scans=2, pointers=False)[2]),
        ("numba-cuda", "roles 512/512 2 scans, pointers", N("roles", threads=512, chunk=512, scans=2)[2])])
    for bs in (512, 1024, 4096)
}


bad = replay_rounds.run(ROWS, dev)
sys.exit(1 if bad else 0)
