"""Replay time of the Numba planner's look-back candidates at bs 4096 and 1024, each graph replayed
in turn (9 rounds of 200 replays behind a sleep kernel: no order effect between rows), every
candidate first checked byte for byte against the current planner (the serving workload and two
out-of-contract draws); then the re-polls and fallbacks a ``warp-lookback`` launch takes
(``count_spins``: workspace words 1 and 2, over 1000 replays).

    python reports/gpu/2026-12-04-b/interleaved.py        # from the repository root, on a GPU
"""
import sys

import torch

from impls.offsets_planner import numba_one_pass as nop
from impls.offsets_planner.harness.sweeps import one_pass, one_pass_calls as c

import replay_rounds  # this folder's

dev = torch.device("cuda", 0)
N, T = c._numba_candidate, c._triton_candidate
ROWS = {
    4096: [("numba-cuda", "current", c.current("numba-cuda")[2]),
           ("triton", "current", c.current("triton")[2]),
           ("numba-cuda", "floor 32", c._numba_chain(32)),
           ("numba-cuda", "floor 64", c._numba_chain(64)),
           ("triton", "floor 32w1", c._triton_chain(32, 1)),
           ("numba-cuda", "roles-lookback 256/256 fixed", N("roles-lookback", threads=256, chunk=256, fixed_chunk=True)[2]),
           ("numba-cuda", "roles-lookback 32/256 fixed", N("roles-lookback", threads=32, chunk=256, fixed_chunk=True)[2]),
           ("numba-cuda", "roles-lookback 64/256 fixed", N("roles-lookback", threads=64, chunk=256, fixed_chunk=True)[2]),
           ("numba-cuda", "warp-lookback 128", N("warp-lookback", chunk=128)[2]),
           ("numba-cuda", "warp-lookback 256", N("warp-lookback", chunk=256)[2]),
           ("numba-cuda", "warp-lookback 512", N("warp-lookback", chunk=512)[2])],
    1024: [("numba-cuda", "current", c.current("numba-cuda")[2]),
           ("numba-cuda", "floor 32", c._numba_chain(32)),
           ("numba-cuda", "warp-lookback 64", N("warp-lookback", chunk=64)[2]),
           ("numba-cuda", "warp-lookback 128", N("warp-lookback", chunk=128)[2]),
           ("numba-cuda", "warp-lookback 256", N("warp-lookback", chunk=256)[2])],
}


bad = replay_rounds.run(ROWS, dev)
for bs, chunk in ((4096, 128), (4096, 256), (4096, 512), (1024, 128)):
    kw = one_pass.workload(bs, dev)
    g = replay_rounds.graph_of(lambda: nop.plan_launch(design="warp-lookback", chunk=chunk, count_spins=True, **kw))
    ws = nop.workspace(dev, "warp-lookback")
    ws[1:3] = 0
    for _ in range(1000):
        g.replay()
    torch.cuda.synchronize()
    print(f"warp-lookback bs {bs} chunk {chunk}: {int(ws[1]) / 1000:.2f} re-polls a launch "
          f"(lane polls past the first), {int(ws[2]) / 1000:.3f} fallbacks a launch")
    ws[1:3] = 0
sys.exit(1 if bad else 0)
