"""The ``roles-lookback`` one-pass Numba CUDA candidate kernel, one source for the GPU and the
simulator: the scheme of :mod:`impls.offsets_planner.triton_roles_lookback` (its docstring gives
the workspace, the epoch and the fallback) with Numba's blocks.

The grid is ``ceil(bs / chunk)`` scan blocks (at least one), then ``ceil(bs / blockDim.x)`` seed
blocks, thread t of seed block s planning the seed of request ``s * blockDim.x + t`` (as
:mod:`impls.offsets_planner.numba_roles_kernel`). Scan block j plans requests
``[j * chunk, (j + 1) * chunk)``, thread t a run of ``ceil(chunk / blockDim.x)`` of them: thread 0
draws the ticket beside the run's loads; one block-wide scan; the last thread publishes the block's
totals as four ``READY | 32 bits`` words; every thread zeroes its share of the other set; warp 0
polls the earlier blocks' words (one volatile load a word, at most ``SPIN_LIMIT`` polls each) and,
if one never shows, every thread sums the lengths of the earlier requests itself. As in
:mod:`impls.offsets_planner.numba_cuda_kernel`, ``cuda`` is a module global and everything else a
parameter or a closure value (numba#3265). Guards: spec section 6.
"""

from __future__ import annotations

import numpy as np
from numba import cuda

SETS_AT = 8
SET_WORDS = 4 * 128
WORKSPACE_LEN = SETS_AT + 2 * SET_WORDS
SPIN_LIMIT = 64


def build_roles_lookback_kernel(*, use_shuffle: bool, padding: int, no_seed: int,
                                max_threads: int, items: int, poll, slow_carry: bool = False):
    """The kernel's Python function (for ``cuda.jit``), with the signature of
    :data:`impls.offsets_planner.numba_one_pass_kernel.SIGNATURE` (``chunk``: a scan block's
    requests).

    Args:
        use_shuffle: warp shuffles plus one shared pass over warp totals (GPU only), else a
            shared-memory Hillis-Steele scan (GPU and simulator).
        padding, no_seed: spec sections 2 and 5 (0 and -1).
        max_threads: the largest block it is launched with (sizes the shared scan arrays).
        items: the most requests one scan thread owns (``blockDim.x * items >= chunk``).
        poll: ``poll(ws, i)`` reads word i of the workspace afresh
            (:func:`impls.offsets_planner.numba_volatile.load_volatile` on the GPU).
        slow_carry: every scan block takes the path of a missing earlier block (tests).
    """
    slots = 32 if use_shuffle else max_threads
    full_mask = 0xFFFFFFFF

    def plan_roles_lookback(rpi, prefix, extend, table, lut, out_verify, out_write, out_seed,
                            out_num_valid, out_enable, out_reqs, ws, bs, lut_len, window,
                            capacity, chunk):
        tid = cuda.threadIdx.x
        nthreads = cuda.blockDim.x
        nscan = max((bs + chunk - 1) // chunk, 1)
        b = cuda.blockIdx.x
        if b >= nscan:  # a seed block: the chain floor's work
            r = (b - nscan) * nthreads + tid
            if r < bs:
                row = rpi[r]
                p = prefix[r]
                e = extend[r]
                seed = no_seed
                if (row != padding and p > 0 and e > 0 and row >= 0 and row < table.shape[0]
                        and table.shape[1] > 0):  # p > 0 guards the -1 column (numba#8028)
                    seed = table[row, min(p - 1, table.shape[1] - 1)]
                    if lut_len > 0 and seed >= 0:  # a negative slot passes untranslated
                        seed = lut[min(seed, lut_len - 1)]
                out_seed[r] = seed
            return
        cell = cuda.shared.array(4, np.int64)  # ticket, missing, fallback sums
        drawn = 0
        if tid == 0:
            drawn = cuda.atomic.add(ws, 0, 1)  # beside the run's loads: used after them
        lo = b * chunk
        hi = min(lo + chunk, bs)
        per = (chunk + nthreads - 1) // nthreads
        begin = lo + tid * per
        vlen = cuda.local.array(items, np.int64)
        wlen = cuda.local.array(items, np.int64)
        own_v = 0
        own_w = 0
        for k in range(items):
            r = begin + k
            vlen[k] = 0
            wlen[k] = 0
            if k < per and r < hi:
                active = rpi[r] != padding
                p = prefix[r]
                e = extend[r]
                v = max(min(p, window) if window > 0 else p, 0)  # spec §5, overflow-free
                vlen[k] = v if active else 0
                wlen[k] = max(e, 0) if active else 0
            own_v += vlen[k]
            own_w += wlen[k]
        if tid == 0:
            cell[0] = drawn
            cell[1] = 0
        s0 = cuda.shared.array(slots, np.int64)
        s1 = cuda.shared.array(slots, np.int64)
        inc_v = own_v
        inc_w = own_w
        lane = tid & 31
        warp = tid >> 5
        if use_shuffle:
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
                t0 = s0[lane] if lane < nthreads >> 5 else 0
                t1 = s1[lane] if lane < nthreads >> 5 else 0
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
        ticket = cell[0]  # visible: the scan's barriers came after thread 0 stored it
        mine = SETS_AT + (ticket >> 16 & 1) * SET_WORDS
        other = SETS_AT + ((ticket >> 16) + 1 & 1) * SET_WORDS
        if tid == nthreads - 1:  # its inclusive scan is the block's total: four self-flagged
            # words, plain stores (through to L2, single-copy atomic; the polls read L2)
            ws[mine + 4 * b] = (1 << 32) | (inc_v & 0xFFFFFFFF)
            ws[mine + 4 * b + 1] = (1 << 32) | (inc_v >> 32 & 0xFFFFFFFF)
            ws[mine + 4 * b + 2] = (1 << 32) | (inc_w & 0xFFFFFFFF)
            ws[mine + 4 * b + 3] = (1 << 32) | (inc_w >> 32 & 0xFFFFFFFF)
        if tid == 0 and (ticket & 0xFFFF) == nscan - 1:  # last ticket: next epoch, count to 0
            cuda.atomic.add(ws, 0, 65536 - nscan)
        c = tid
        while c < SET_WORDS:  # this block's share of the other set, for the next launch
            if (c >> 2) % nscan == b:
                ws[other + c] = 0
            c += nthreads
        cuda.syncthreads()  # the scan's reads of s0 and s1 are done
        if warp == 0:
            acc_v = 0
            acc_w = 0
            missing = 1 if slow_carry else 0
            i = lane
            while i < 4 * b:
                word = poll(ws, mine + i)
                spins = 0
                while word >> 32 != 1 and spins < SPIN_LIMIT:
                    word = poll(ws, mine + i)
                    spins += 1
                if word >> 32 != 1:
                    missing = 1
                half = word & 0xFFFFFFFF
                if i & 1:
                    half = half << 32
                if i & 2:
                    acc_w += half
                else:
                    acc_v += half
                i += 32
            s0[lane] = acc_v
            s1[lane] = acc_w
            if missing:
                cell[1] = 1
        if tid == 0:
            cell[2] = 0
            cell[3] = 0
        cuda.syncthreads()
        base_v = 0
        base_w = 0
        if cell[1] == 1:  # an earlier block never showed: the lengths of every earlier request
            r = tid
            while r < lo:
                if rpi[r] != padding:
                    p = prefix[r]
                    base_v += max(min(p, window) if window > 0 else p, 0)
                    base_w += max(extend[r], 0)
                r += nthreads
            cuda.atomic.add(cell, 2, base_v)
            cuda.atomic.add(cell, 3, base_w)
            cuda.syncthreads()
            base_v = cell[2]
            base_w = cell[3]
        else:
            for k in range(32 if use_shuffle else min(32, nthreads)):
                base_v += s0[k]
                base_w += s1[k]
        run_v = base_v + inc_v - own_v
        run_w = base_w + inc_w - own_w
        for k in range(items):
            r = begin + k
            if k < per and r < hi:
                out_verify[r] = run_v
                out_write[r] = run_w
                run_v += vlen[k]
                run_w += wlen[k]
        if tid == nthreads - 1 and b == nscan - 1:
            out_verify[bs] = base_v + inc_v
            out_write[bs] = base_w + inc_w
            valid = min(base_v + inc_v, capacity)
            out_num_valid[0] = ((valid + 0x80000000) & 0xFFFFFFFF) - 0x80000000
            out_enable[0] = 0 if base_v + inc_v > capacity else 1
            out_reqs[0] = bs

    return plan_roles_lookback
