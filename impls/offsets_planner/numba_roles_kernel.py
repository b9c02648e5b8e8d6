"""The ``roles`` one-pass Numba CUDA candidate kernel, one source for the GPU and the simulator.

Import it through :mod:`impls.offsets_planner.numba_one_pass` (which imports
:mod:`impls.offsets_planner.numba_cuda_planner` first: that decides ``NUMBA_ENABLE_CUDASIM``); as in
:mod:`impls.offsets_planner.numba_cuda_kernel`, ``cuda`` is a module global and everything else a
parameter or a closure value (numba#3265).

The same split as :mod:`impls.offsets_planner.triton_roles`: blocks ``0 .. ceil(bs / tile) - 1``
are seed blocks, thread t of block b planning the seeds of requests ``b * tile + t``,
``b * tile + t + blockDim.x``, ... below ``(b + 1) * tile`` (one a thread on the GPU, where
``tile`` is at most ``blockDim.x``; several in the simulator, where fewer, wider blocks cost less):
for each, the request values, then the table entry, then the LUT entry, one store (the chain
floor's work, :mod:`conformance.bench.chain_numba`); the last ``scans`` blocks scan. With
``scans == 1`` one block scans both lengths and writes both offsets, totals and the three
scalars; with ``scans == 2`` the first scan block does the verify side (``num_valid``,
``enable``) and the second the write side (``write_num_valid_reqs``). In a scan block thread t
owns a run of ``ceil(bs / blockDim.x)`` consecutive requests (at most ``items``): its loads, then
one block-wide scan of the run totals, then its stores. Blocks never talk to each other: no
workspace, valid under CUDA-graph replay and for any residency. Guards: spec section 6, as the
``blocked`` kernel's.
"""

from __future__ import annotations

import numpy as np
from numba import cuda


def build_roles_kernel(*, use_shuffle: bool, padding: int, no_seed: int, max_threads: int,
                       items: int, scans: int):
    """The kernel's Python function (for ``cuda.jit``), with the signature of
    :data:`impls.offsets_planner.numba_cuda_kernel.ARRAY_SIGNATURE` (its workspace argument unused,
    its ``chunk`` the seed blocks' requests).

    Args:
        use_shuffle: warp shuffles plus one shared pass over warp totals (GPU only), else a
            shared-memory Hillis-Steele scan (GPU and simulator).
        padding, no_seed: spec sections 2 and 5 (0 and -1).
        max_threads: the largest block it is launched with (sizes the shared scan arrays).
        items: the most requests one scan thread owns (``blockDim.x * items >= bs``).
        scans: 1 or 2 scan blocks (module docstring).
    """
    slots = 32 if use_shuffle else max_threads
    full_mask = 0xFFFFFFFF
    both = scans == 1

    def plan_roles(rpi, prefix, extend, table, lut, out_verify, out_write, out_seed,
                   out_num_valid, out_enable, out_reqs, ws, bs, lut_len, window, capacity, tile,
                   rows, cols):
        tid = cuda.threadIdx.x
        nthreads = cuda.blockDim.x
        seeders = cuda.gridDim.x - scans
        b = cuda.blockIdx.x
        if b < seeders:
            r = b * tile + tid
            end = min(r - tid + tile, bs)
            while r < end:  # once a thread when tile <= blockDim.x (the GPU's shapes)
                row = rpi[r]
                p = prefix[r]
                e = extend[r]
                seed = no_seed
                # prefix > 0 guards the -1 column (numba#8028); row and length guard the table.
                if (row != padding and p > 0 and e > 0 and row >= 0 and row < rows
                        and cols > 0):
                    seed = table[row * cols + min(p - 1, cols - 1)]
                    if lut_len > 0 and seed >= 0:  # a negative slot passes untranslated
                        seed = lut[min(seed, lut_len - 1)]
                out_seed[r] = seed
                r += nthreads
            return
        verify = both or b == seeders
        write = both or b != seeders
        per = (bs + nthreads - 1) // nthreads
        begin = tid * per
        vlen = cuda.local.array(items, np.int64)
        wlen = cuda.local.array(items, np.int64)
        own_v = 0
        own_w = 0
        for k in range(items):  # the run's loads, all before any store
            r = begin + k
            vlen[k] = 0
            wlen[k] = 0
            if k < per and r < bs:
                active = rpi[r] != padding
                if verify:
                    p = prefix[r]
                    v = max(min(p, window) if window > 0 else p, 0)  # spec §5, overflow-free
                    vlen[k] = v if active else 0
                if write:
                    e = extend[r]
                    wlen[k] = max(e, 0) if active else 0
            own_v += vlen[k]
            own_w += wlen[k]
        s0 = cuda.shared.array(slots, np.int64)
        s1 = cuda.shared.array(slots, np.int64)
        inc_v = own_v
        inc_w = own_w
        if use_shuffle:
            lane = tid & 31
            warp = tid >> 5
            d = 1
            while d < 32:
                u0 = cuda.shfl_up_sync(full_mask, inc_v, d)
                u1 = cuda.shfl_up_sync(full_mask, inc_w, d)
                if lane >= d:
                    inc_v += u0
                    inc_w += u1
                d *= 2
            if lane == 31:
                s0[warp] = inc_v
                s1[warp] = inc_w
            cuda.syncthreads()
            if warp == 0:
                nwarps = nthreads >> 5
                t0 = s0[lane] if lane < nwarps else 0
                t1 = s1[lane] if lane < nwarps else 0
                d = 1
                while d < 32:
                    u0 = cuda.shfl_up_sync(full_mask, t0, d)
                    u1 = cuda.shfl_up_sync(full_mask, t1, d)
                    if lane >= d:
                        t0 += u0
                        t1 += u1
                    d *= 2
                s0[lane] = t0
                s1[lane] = t1
            cuda.syncthreads()
            if warp > 0:
                inc_v += s0[warp - 1]
                inc_w += s1[warp - 1]
        else:
            s0[tid] = inc_v
            s1[tid] = inc_w
            cuda.syncthreads()
            d = 1
            while d < nthreads:
                u0 = s0[tid - d] if tid >= d else 0
                u1 = s1[tid - d] if tid >= d else 0
                cuda.syncthreads()
                s0[tid] += u0
                s1[tid] += u1
                cuda.syncthreads()
                d *= 2
            inc_v = s0[tid]
            inc_w = s1[tid]
        run_v = inc_v - own_v
        run_w = inc_w - own_w
        for k in range(items):
            r = begin + k
            if k < per and r < bs:
                if verify:
                    out_verify[r] = run_v
                    run_v += vlen[k]
                if write:
                    out_write[r] = run_w
                    run_w += wlen[k]
        if tid == nthreads - 1:  # its inclusive scan is the block's total
            if verify:
                out_verify[bs] = inc_v
                valid = min(inc_v, capacity)
                out_num_valid[0] = ((valid + 0x80000000) & 0xFFFFFFFF) - 0x80000000
                out_enable[0] = 0 if inc_v > capacity else 1
            if write:
                out_write[bs] = inc_w
                out_reqs[0] = bs

    return plan_roles
