"""Raw-pointer against Numba-array kernel parameters, at bs 512, 1024 and 4096: the Numba
planner (raw pointers), its kernels with Numba arrays, the chain floors both ways and Triton's,
each graph replayed in turn (9 rounds of 200 replays behind a sleep kernel), every candidate first
checked byte for byte against the current planner (the serving workload and two out-of-contract
draws, and again after the replays).

    python reports/gpu/2026-12-04-b/pointers.py        # from the repository root, on a GPU
"""
import sys

import torch

from impls.offsets_planner.harness.sweeps import one_pass, one_pass_calls as c

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


def graph_of(call):
    call()
    torch.cuda.synchronize()
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):
            call()
    torch.cuda.current_stream().wait_stream(side)
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        call()
    torch.cuda.synchronize()
    return g


graphs, bad = [], 0
for bs, rows in ROWS.items():
    kw = one_pass.workload(bs, dev)
    cur = c.current("numba-cuda")[2]
    checks = [(kw, one_pass.outputs_of(cur, kw))]
    for seed in (1, 2):
        hk = c.hazard_kwargs(bs, seed, dev)
        checks.append((hk, one_pass.outputs_of(cur, hk)))
    for fw, label, make in rows:
        check = "-"
        if "floor" not in label and label != "current":
            diffs = [one_pass.difference(one_pass.outputs_of(make, k), want) for k, want in checks]
            check = next((d for d in diffs if d), "same")
            bad += check != "same"
        run = one_pass._copy(kw)
        graphs.append((bs, fw, label, check, graph_of(make(run)), run, checks[0][1]))
res = {i: [] for i in range(len(graphs))}
for rnd in range(9):
    for i, (bs, fw, label, check, g, run, want) in enumerate(graphs):
        for _ in range(10):
            g.replay()
        torch.cuda.synchronize()
        torch.cuda._sleep(int(200 * 20e-6 * 2e9))
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        for _ in range(200):
            g.replay()
        e.record()
        e.synchronize()
        res[i].append(s.elapsed_time(e) * 1e3 / 200)
for i, (bs, fw, label, check, g, run, want) in enumerate(graphs):
    after = "-" if check == "-" else (one_pass.difference(
        {n: run[n].cpu() for n in want}, want) or "same")
    xs = sorted(res[i])
    print(f"{bs:5d} {fw:11s} {label:30s} median {xs[len(xs) // 2]:.2f} min {xs[0]:.2f} "
          f"max {xs[-1]:.2f}  check {check[:60]} after replays {after[:60]}")
sys.exit(1 if bad else 0)
