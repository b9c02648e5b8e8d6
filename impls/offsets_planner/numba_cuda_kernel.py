"""The offsets planner's kernel for Numba CUDA, one source for the GPU and the simulator.

Import it through :mod:`impls.offsets_planner.numba_cuda_planner`, which decides the mode (``NUMBA_ENABLE_CUDASIM``)
before anything imports ``numba.cuda``. The kernel refers to ``cuda`` as a module global so that
Numba's simulator can swap in its fake module; every other name it uses is a parameter or a closure
value of :func:`build_kernel`, frozen alike when compiled and when simulated (numba#3265).

Block b of the grid plans the ``chunk`` requests [b * chunk, (b + 1) * chunk), thread t of it a run
of ``ceil(chunk / blockDim.x)`` consecutive ones. Blocks never talk to each other: each sums the
lengths of every request before its chunk itself (coalesced, thread-strided reads of the three
input vectors), so the plan is one launch with no workspace and no inter-block synchronisation,
and the table and LUT gathers, which dominate, are spread over several multiprocessors. In a
block: its runs' inputs, table entries and LUT entries are loaded in three rounds (no store in
between, so latencies overlap); one block-wide scan gives each run its start and the block the
total before it; then the seeds and offsets are stored. The last thread of the last block writes the
totals and the three scalars. Every read is guarded by the condition that keeps it in bounds
(spec section 6).
"""

from __future__ import annotations

import numpy as np
from numba import cuda, types

_SCALARS = (types.int64,) * 7
ARRAY_SIGNATURE = types.void(*[types.int64[::1]] * 3, types.int32[::1], *[types.int64[::1]] * 4,
                             *[types.int32[::1]] * 3, types.int64[::1], *_SCALARS)
"""The kernel parameters of the planner's kernels (``blocked`` here, ``roles``, ``roles-lookback``
and the ``warp-lookback`` candidate), as Numba arrays: rpi, prefix, extend, the table's
``rows * cols`` entries row after row (int32), lut, the six outputs, a workspace (int64, read
only by the look-back designs), then bs, lut_len, W, verify_capacity, chunk (requests per
block), rows and cols (the table's shape). The simulator runs the same sources on 1-D arrays."""
_P64, _P32 = types.CPointer(types.int64), types.CPointer(types.int32)
POINTER_SIGNATURE = types.void(_P64, _P64, _P64, _P32, *[_P64] * 4, *[_P32] * 3,
                               types.int64[::1], *_SCALARS)
""":data:`ARRAY_SIGNATURE` with the eleven tensors as raw pointers (the workspace stays an array:
Numba's atomics take arrays): 11 kernel parameters where Numba's arrays take 7 each. The same
chain runs up to 0.2 us faster that way on an H200 (reports/gpu/2026-12-04-b/)."""


def build_kernel(*, use_shuffle: bool, padding: int, no_seed: int, max_threads: int, items: int,
                 unroll: int = 8):
    """The kernel's Python function (to pass to ``cuda.jit``), constants bound as closure values.

    Args:
        use_shuffle: scan with warp shuffles plus one shared-memory pass over warp totals (GPU
            only), else a shared-memory Hillis-Steele scan (GPU and simulator; the simulator has
            no shuffles).
        padding: the padding ``req_pool_indices`` value (spec section 2: 0).
        no_seed: the seed of a request with nothing to anchor on (spec section 5: -1).
        max_threads: the largest block it will be launched with (sizes the shared scan arrays).
        items: the most requests one thread plans: launch with ``blockDim.x * items >= chunk``
            and ``gridDim.x * chunk >= bs`` (at least one block, also for bs = 0).
        unroll: loads each thread keeps in flight while summing the requests before its block.

    The kernel's arguments are those of :data:`ARRAY_SIGNATURE` (``window`` is ``swa_window_size``,
    ``capacity`` is ``verify_capacity``). Semantics: spec sections 5 and 6, this project's column.
    """
    slots = 32 if use_shuffle else max_threads
    full_mask = 0xFFFFFFFF

    def plan_offsets(rpi, prefix, extend, table, lut, out_verify, out_write, out_seed,
                     out_num_valid, out_enable, out_reqs, ws, bs, lut_len, window, capacity, chunk,
                     rows, cols):
        tid = cuda.threadIdx.x
        nthreads = cuda.blockDim.x
        lo = cuda.blockIdx.x * chunk
        hi = min(lo + chunk, bs)
        per = (chunk + nthreads - 1) // nthreads
        begin = lo + tid * per
        max_reqs = rows
        max_seq_len = cols
        rows = cuda.local.array(unroll, np.int64)
        pre = cuda.local.array(unroll, np.int64)
        ext = cuda.local.array(unroll, np.int64)
        base_v = 0
        base_w = 0
        r0 = tid
        while r0 < lo:  # the lengths of every request before this block's chunk
            for k in range(unroll):
                r = r0 + k * nthreads
                rows[k] = padding
                if r < lo:
                    rows[k] = rpi[r]
                    pre[k] = prefix[r]
                    ext[k] = extend[r]
            for k in range(unroll):
                if rows[k] != padding:
                    # p - max(p - W, 0) is min(p, W): no int64 overflow for any p and W.
                    base_v += max(min(pre[k], window) if window > 0 else pre[k], 0)
                    base_w += max(ext[k], 0)
            r0 += unroll * nthreads
        row_k = cuda.local.array(items, np.int64)
        vlen = cuda.local.array(items, np.int64)
        wlen = cuda.local.array(items, np.int64)
        seed = cuda.local.array(items, np.int64)
        for k in range(items):  # round 1: this thread's inputs
            r = begin + k
            row_k[k] = padding
            vlen[k] = 0
            wlen[k] = 0
            if k < per and r < hi:
                row_k[k] = rpi[r]
                vlen[k] = prefix[r]  # the prefix, until round 2 makes it a length
                wlen[k] = extend[r]
        own_v = 0
        own_w = 0
        for k in range(items):  # round 2: lengths, and the table entry a seed needs
            p = vlen[k]
            row = row_k[k]
            seed[k] = no_seed
            if row == padding:
                vlen[k] = 0
                wlen[k] = 0
            else:
                vlen[k] = max(min(p, window) if window > 0 else p, 0)  # spec §5, overflow-free
                wlen[k] = max(wlen[k], 0)
                # prefix > 0 guards the -1 column (numba#8028); row and length guard the table.
                if p > 0 and wlen[k] > 0 and row >= 0 and row < max_reqs and max_seq_len > 0:
                    seed[k] = table[row * max_seq_len + min(p - 1, max_seq_len - 1)]
            own_v += vlen[k]
            own_w += wlen[k]
        if lut_len > 0:
            for k in range(items):  # round 3: the LUT (a negative slot passes untranslated)
                if seed[k] >= 0:
                    seed[k] = lut[min(seed[k], lut_len - 1)]
        for k in range(items):
            if k < per and begin + k < hi:
                out_seed[begin + k] = seed[k]
        # one block-wide scan: inclusive scans of own_v and own_w, and block totals of base_v/w
        s0 = cuda.shared.array(slots, np.int64)
        s1 = cuda.shared.array(slots, np.int64)
        s2 = cuda.shared.array(slots, np.int64)
        s3 = cuda.shared.array(slots, np.int64)
        totals = cuda.shared.array(2, np.int64)  # the block's base totals (shuffle scan)
        inc_v = own_v
        inc_w = own_w
        if use_shuffle:
            lane = tid & 31
            warp = tid >> 5
            d = 1
            while d < 32:
                u0 = cuda.shfl_up_sync(full_mask, inc_v, d)
                u1 = cuda.shfl_up_sync(full_mask, inc_w, d)
                u2 = cuda.shfl_up_sync(full_mask, base_v, d)
                u3 = cuda.shfl_up_sync(full_mask, base_w, d)
                if lane >= d:
                    inc_v += u0
                    inc_w += u1
                    base_v += u2
                    base_w += u3
                d *= 2
            if lane == 31:
                s0[warp] = inc_v
                s1[warp] = inc_w
                s2[warp] = base_v
                s3[warp] = base_w
            cuda.syncthreads()
            if warp == 0:
                nwarps = nthreads >> 5
                t0 = s0[lane] if lane < nwarps else 0
                t1 = s1[lane] if lane < nwarps else 0
                t2 = s2[lane] if lane < nwarps else 0
                t3 = s3[lane] if lane < nwarps else 0
                d = 1
                while d < 32:
                    u0 = cuda.shfl_up_sync(full_mask, t0, d)
                    u1 = cuda.shfl_up_sync(full_mask, t1, d)
                    u2 = cuda.shfl_up_sync(full_mask, t2, d)
                    u3 = cuda.shfl_up_sync(full_mask, t3, d)
                    if lane >= d:
                        t0 += u0
                        t1 += u1
                        t2 += u2
                        t3 += u3
                    d *= 2
                s0[lane] = t0
                s1[lane] = t1
                if lane == 31:
                    totals[0] = t2
                    totals[1] = t3
            cuda.syncthreads()
            if warp > 0:
                inc_v += s0[warp - 1]
                inc_w += s1[warp - 1]
            base_v = totals[0]
            base_w = totals[1]
        else:
            s0[tid] = inc_v
            s1[tid] = inc_w
            s2[tid] = base_v
            s3[tid] = base_w
            cuda.syncthreads()
            d = 1
            while d < nthreads:
                u0 = s0[tid - d] if tid >= d else 0
                u1 = s1[tid - d] if tid >= d else 0
                u2 = s2[tid - d] if tid >= d else 0
                u3 = s3[tid - d] if tid >= d else 0
                cuda.syncthreads()
                s0[tid] += u0
                s1[tid] += u1
                s2[tid] += u2
                s3[tid] += u3
                cuda.syncthreads()
                d *= 2
            inc_v = s0[tid]
            inc_w = s1[tid]
            base_v = s2[nthreads - 1]
            base_w = s3[nthreads - 1]
        inc_v += base_v
        inc_w += base_w
        run_v = inc_v - own_v
        run_w = inc_w - own_w
        for k in range(items):  # offsets
            if k < per and begin + k < hi:
                out_verify[begin + k] = run_v
                out_write[begin + k] = run_w
                run_v += vlen[k]
                run_w += wlen[k]
        if tid == nthreads - 1 and cuda.blockIdx.x == cuda.gridDim.x - 1:
            out_verify[bs] = inc_v
            out_write[bs] = inc_w
            valid = min(inc_v, capacity)
            out_num_valid[0] = ((valid + 0x80000000) & 0xFFFFFFFF) - 0x80000000
            out_enable[0] = 0 if inc_v > capacity else 1
            out_reqs[0] = bs

    return plan_offsets
