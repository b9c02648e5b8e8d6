"""Two questions about the Numba planner's replay time, each graph replayed in turn (9 rounds of
200 replays behind a sleep kernel):

1. What do Numba's flattened array parameters cost? The chain-floor kernel with Numba's array
   arguments (46 eight-byte parameters) against the same chain with raw pointers and the table's
   row length (10), both launched with one ``cuLaunchKernel``, and empty kernels of 1, 46 and 92
   int64 parameters, at bs 1, 64, 1024 and 4096 (32 threads a block).
2. Does a sleep between publishing and the first poll save the re-poll? ``roles-lookback``
   (256 threads, 256-request chunks, fixed) at bs 4096 with warp 0 sleeping 0-800 ns, checked
   byte for byte against the current planner, and the re-polls and fallbacks a launch takes.

    python reports/gpu/2026-12-04-b/params_and_delay.py     # from the repository root, on a GPU
"""
import ctypes
import sys

import torch
from numba import cuda, types

from impls.offsets_planner import numba_cuda_planner as nb
from impls.offsets_planner import numba_one_pass as nop
from impls.offsets_planner.contract import OUTPUT_NAMES
from impls.offsets_planner.harness.sweeps import one_pass, one_pass_calls as c

from replay_rounds import graph_of, interleaved  # this folder's

dev = torch.device("cuda", 0)
nb.probe()
LAUNCH = ctypes.CDLL("libcuda.so.1").cuLaunchKernel
LAUNCH.restype = ctypes.c_int


def driver_call(kernel, grid, threads, values):
    cells = [ctypes.c_int64(int(v)) for v in values]
    params = (ctypes.c_void_p * len(cells))(*[ctypes.addressof(x) for x in cells])
    fn = ctypes.c_void_p(nb.packed_launch.kernel_handle(kernel))
    one = ctypes.c_uint(1)

    def call():
        stream = ctypes.c_void_p(torch.cuda.current_stream().cuda_stream)
        rc = LAUNCH(fn, ctypes.c_uint(grid), one, one, ctypes.c_uint(threads), one, one,
                    ctypes.c_uint(0), stream, params, None)
        assert rc == 0, rc
    call.keep = (cells, params)
    return call


def chain_ptr(rpi, prefix, extend, table, lut, out, bs, lut_len, nrows, ncols):
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    if i < bs:
        row = rpi[i]
        p = prefix[i]
        slot = -1
        if row > 0 and row < nrows and p > 0 and extend[i] > 0:
            slot = table[row * ncols + min(p - 1, ncols - 1)]
            if lut_len > 0 and slot >= 0:
                slot = lut[min(slot, lut_len - 1)]
        out[i] = slot


P64 = types.CPointer(types.int64)
CHAIN_PTR = cuda.jit(types.void(P64, P64, P64, types.CPointer(types.int32), P64, P64,
                                types.int64, types.int64, types.int64, types.int64))(chain_ptr)
EMPTY = {}
for n in (1, 46, 92):
    names = ", ".join(f"a{i}" for i in range(n))
    scope = {"cuda": cuda}
    exec(f"def empty({names}):\n    pass\n", scope)
    EMPTY[n] = cuda.jit(types.void(*([types.int64] * n)))(scope["empty"])


def chain_array_driver(kw, threads=32):
    rpi, prefix, extend, table, lut, out, lut_len = c._chain_args(kw)
    bs = int(rpi.shape[0])
    from conformance.bench.chain_numba import chain_kernel
    values = [v for t in (rpi, prefix, extend, table, lut, out) for v in nb.packed_launch.array_params(t)] + [
        bs, lut_len]  # Numba's flattened arrays: meminfo, parent, size, itemsize, data, shape, strides
    return driver_call(chain_kernel, max(1, -(-bs // threads)), threads, values)


def chain_ptr_driver(kw, threads=32):
    rpi, prefix, extend, table, lut, out, lut_len = c._chain_args(kw)
    bs = int(rpi.shape[0])
    values = [t.data_ptr() for t in (rpi, prefix, extend, table, lut, out)] + [
        bs, lut_len, table.shape[0], table.shape[1]]
    return driver_call(CHAIN_PTR, max(1, -(-bs // threads)), threads, values)


rows, bad = [], 0
for n, k in EMPTY.items():
    rows.append((0, f"empty kernel, {n} int64 params", graph_of(driver_call(k, 1, 32, range(n)))))
for bs in (1, 64, 1024, 4096):
    kw = one_pass.workload(bs, dev)
    a, p = one_pass._copy(kw), one_pass._copy(kw)
    rows.append((bs, "chain, numba launch (arrays)", graph_of(c._numba_chain(32)(one_pass._copy(kw)))))
    call_a, call_p = chain_array_driver(a), chain_ptr_driver(p)
    rows.append((bs, "chain, driver launch, arrays", graph_of(call_a)))
    rows.append((bs, "chain, driver launch, pointers", graph_of(call_p)))
    torch.cuda.synchronize()
    same = torch.equal(a[OUTPUT_NAMES[2]], p[OUTPUT_NAMES[2]])
    bad += not same
    print(f"bs {bs}: pointer chain's seeds {'equal' if same else 'DIFFER from'} the array chain's")
    rows.append((bs, "chain, triton 32w1", graph_of(c._triton_chain(32, 1)(one_pass._copy(kw)))))
kw = one_pass.workload(4096, dev)
cur = c.current("numba-cuda")[2]
checks = [(kw, one_pass.outputs_of(cur, kw))]
for seed in (1, 2):
    hk = c.hazard_kwargs(4096, seed, dev)
    checks.append((hk, one_pass.outputs_of(cur, hk)))
rows.append((4096, "current planner", graph_of(cur(one_pass._copy(kw)))))
for delay in (0, 100, 200, 400, 800):
    def make(k, delay=delay):
        return lambda: nop.plan_launch(design="roles-lookback", threads=256, chunk=256,
                                       fixed_chunk=True, poll_delay_ns=delay, **k)
    diffs = [one_pass.difference(one_pass.outputs_of(make, k), want) for k, want in checks]
    check = next((d for d in diffs if d), "same")
    bad += check != "same"
    print(f"roles-lookback delay {delay} ns: {check}")
    rows.append((4096, f"roles-lookback 256/256, delay {delay} ns", graph_of(make(one_pass._copy(kw)))))
for (bs, label, _g), xs in zip(rows, interleaved([g for _bs, _label, g in rows])):
    print(f"{bs:5d} {label:42s} median {xs[len(xs) // 2]:.2f} min {xs[0]:.2f} max {xs[-1]:.2f}")
for delay in (0, 200, 400):
    g = graph_of(lambda: nop.plan_launch(design="roles-lookback", threads=256, chunk=256,
                                         fixed_chunk=True, poll_delay_ns=delay,
                                         count_spins=True, **kw))
    ws = nop.workspace(dev, "roles-lookback")
    ws[1:3] = 0
    for _ in range(1000):
        g.replay()
    torch.cuda.synchronize()
    print(f"roles-lookback 256/256 delay {delay} ns, bs 4096: {int(ws[1]) / 1000:.2f} re-polls "
          f"a launch, {int(ws[2]) / 1000:.3f} fallbacks a launch")
    ws[1:3] = 0
sys.exit(1 if bad else 0)
