"""Diagnostic: graph nodes, interleaved replay time and (under ncu) kernel durations of the
current planners against their identical candidates at bs 4096 and 1024."""
import ctypes, sys, torch
from conformance.bench.timing import capture
from impls.offsets_planner.harness.sweeps import one_pass, one_pass_calls as c
dev = torch.device("cuda", 0)
NCU = "--ncu" in sys.argv
entries = []
N = c._numba_candidate
for bs in (4096, 1024):
    kw = one_pass.workload(bs, dev)
    for fw in ("triton", "numba-cuda"):
        entries.append((bs, fw, "current", c.current(fw)[2], kw))
    if bs == 4096:
        entries.append((bs, "numba-cuda", "256/256 runtime chunk", N("roles-lookback", threads=256, chunk=256)[2], kw))
        entries.append((bs, "numba-cuda", "256/256 fixed", N("roles-lookback", threads=256, chunk=256, fixed_chunk=True)[2], kw))
        entries.append((bs, "numba-cuda", "256/256 fixed seed64", N("roles-lookback", threads=256, chunk=256, seed_tile=64, fixed_chunk=True)[2], kw))
        entries.append((bs, "numba-cuda", "512/512 fixed", N("roles-lookback", threads=512, chunk=512, fixed_chunk=True)[2], kw))
        entries.append((bs, "numba-cuda", "128/256 fixed", N("roles-lookback", threads=128, chunk=256, fixed_chunk=True)[2], kw))
        entries.append((bs, "numba-cuda", "floor 64", c._numba_chain(64), kw))
        entries.append((bs, "triton", "floor 32w1", c._triton_chain(32, 1), kw))
    else:
        entries.append((bs, "numba-cuda", "256/256 fixed", N("roles-lookback", threads=256, chunk=256, fixed_chunk=True)[2], kw))
        entries.append((bs, "numba-cuda", "128/128 fixed", N("roles-lookback", threads=128, chunk=128, fixed_chunk=True)[2], kw))
        entries.append((bs, "numba-cuda", "floor 64", c._numba_chain(64), kw))
        entries.append((bs, "triton", "floor 32w1", c._triton_chain(32, 1), kw))
graphs = []
libcuda = ctypes.CDLL("libcuda.so.1")
for bs, fw, label, make, kw in entries:
    run = one_pass._copy(kw)
    call = make(run)
    call()
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph(keep_graph=True)
    side = torch.cuda.Stream(); side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3): call()
    torch.cuda.current_stream().wait_stream(side); torch.cuda.synchronize()
    with torch.cuda.graph(g):
        call()
    torch.cuda.synchronize()
    n = ctypes.c_size_t(0)
    try:
        rc = libcuda.cuGraphGetNodes(ctypes.c_void_p(g.raw_cuda_graph()), None, ctypes.byref(n))
        nodes = f"{n.value} (rc {rc})"
    except Exception as e:
        nodes = f"? {e}"
    graphs.append((bs, fw, label, g, nodes))
if NCU:
    for bs, fw, label, g, nodes in graphs:
        torch.cuda.nvtx.range_push(f"{bs} {fw} {label}")
        for _ in range(3): g.replay()
        torch.cuda.synchronize()
        torch.cuda.nvtx.range_pop()
    sys.exit(0)
res = {i: [] for i in range(len(graphs))}
for rnd in range(9):
    for i, (bs, fw, label, g, nodes) in enumerate(graphs):
        for _ in range(10): g.replay()
        torch.cuda.synchronize()
        torch.cuda._sleep(int(200 * 20e-6 * 2e9))
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        for _ in range(200): g.replay()
        e.record(); e.synchronize()
        res[i].append(s.elapsed_time(e) * 1e3 / 200)
for i, (bs, fw, label, g, nodes) in enumerate(graphs):
    xs = sorted(res[i])
    print(f"{bs:5d} {fw:11s} {label:24s} nodes {nodes:10s} median {xs[len(xs)//2]:.2f} min {xs[0]:.2f} max {xs[-1]:.2f}")
