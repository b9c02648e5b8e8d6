"""Candidate one-pass Numba CUDA kernels for the whole plan, one source for the GPU and the simulator.

Import it through :mod:`impls.offsets_planner.numba_one_pass`, which imports :mod:`impls.offsets_planner.numba_cuda_planner` first
(that decides ``NUMBA_ENABLE_CUDASIM``). As in :mod:`impls.offsets_planner.numba_cuda_kernel`, the kernel names
``cuda`` as a module global and everything else is a parameter or a closure value (numba#3265);
the workspace's word offsets (:mod:`impls.offsets_planner.numba_one_pass_layout`, with the
look-back designs' protocol) are module globals too, constants to the compiler.

Block b plans the ``chunk`` requests of tile b, thread t a run of ``ceil(chunk / blockDim.x)``
consecutive ones (at most ``items``). Order of the work, so that only the chain's round trips are
dependent (request values -> table entry -> LUT entry): the thread's inputs, then its table
gathers, then the carry (``blocked``: the lengths of every request before the tile, thread-strided
and ``unroll`` loads deep; ``lookback``: the totals published by earlier tiles), then its LUT
gathers, then one block-wide scan and the stores. No store precedes a gather. Guards: spec
section 6, as the default kernel's.
"""

from __future__ import annotations

import numpy as np
from numba import cuda

from impls.offsets_planner.numba_one_pass_layout import (AGG_V, AGG_W, FLAGS, PACKED, SET_WORDS,
                                                         SPIN_LIMIT)


def build_kernel(*, design: str, use_shuffle: bool, padding: int, no_seed: int, max_threads: int,
                 items: int, unroll: int = 4, poll=None):
    """The kernel's Python function for ``design`` (``single``, ``blocked``, ``lookback`` or
    ``lookback-pid``).

    Args:
        use_shuffle: warp-shuffle scan plus one shared pass over warp totals (GPU only), else a
            shared-memory Hillis-Steele scan (GPU and simulator).
        padding, no_seed: spec sections 2 and 5 (0 and -1).
        max_threads: the largest block it is launched with (sizes the shared scan arrays).
        items: the most requests one thread plans (``blockDim.x * items >= chunk``).
        unroll: loads in flight per thread while a ``blocked`` block sums the requests before it.
        poll: ``poll(ws, i)`` reads word i of the workspace afresh (``lookback-packed``; GPU:
            :func:`impls.offsets_planner.numba_volatile.load_volatile`; simulator: a plain read).
    """
    slots = 32 if use_shuffle else max_threads
    full_mask = 0xFFFFFFFF
    blocked = design == "blocked"
    packed = design == "lookback-packed"
    lookback = design in ("lookback", "lookback-pid")
    by_ticket = design == "lookback"
    ticket_word = PACKED if packed else 0

    def plan_offsets(rpi, prefix, extend, table, lut, out_verify, out_write, out_seed,
                     out_num_valid, out_enable, out_reqs, ws, bs, lut_len, window, capacity,
                     chunk):
        tid = cuda.threadIdx.x
        nthreads = cuda.blockDim.x
        nblocks = cuda.gridDim.x
        ticket_cell = cuda.shared.array(1, np.int64)
        blk = cuda.blockIdx.x
        epoch = 0
        if packed and nblocks > 1 and tid == 0:  # the epoch only: it returns with the inputs
            ticket_cell[0] = cuda.atomic.add(ws, ticket_word, 1)
        if lookback and by_ticket and nblocks > 1:
            if tid == 0:
                t = cuda.atomic.add(ws, 0, 1)
                ticket_cell[0] = t
                if (t & 0xFFFF) == nblocks - 1:
                    cuda.atomic.add(ws, 0, 65536 - nblocks)
            cuda.syncthreads()
            epoch = ticket_cell[0] >> 16
            blk = ticket_cell[0] & 0xFFFF
        lo = blk * chunk
        hi = min(lo + chunk, bs)
        per = (chunk + nthreads - 1) // nthreads
        begin = lo + tid * per
        max_reqs = table.shape[0]
        max_seq_len = table.shape[1]
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
                vlen[k] = max(min(p, window) if window > 0 else p, 0)  # spec 5, overflow-free
                wlen[k] = max(wlen[k], 0)
                if p > 0 and wlen[k] > 0 and row >= 0 and row < max_reqs and max_seq_len > 0:
                    seed[k] = table[row, min(p - 1, max_seq_len - 1)]
            own_v += vlen[k]
            own_w += wlen[k]
        base_v = 0
        base_w = 0
        if blocked:  # the lengths of every request before this tile (request values only)
            rows = cuda.local.array(unroll, np.int64)
            pre = cuda.local.array(unroll, np.int64)
            ext = cuda.local.array(unroll, np.int64)
            r0 = tid
            while r0 < lo:
                for k in range(unroll):
                    r = r0 + k * nthreads
                    rows[k] = padding
                    if r < lo:
                        rows[k] = rpi[r]
                        pre[k] = prefix[r]
                        ext[k] = extend[r]
                for k in range(unroll):
                    if rows[k] != padding:
                        base_v += max(min(pre[k], window) if window > 0 else pre[k], 0)
                        base_w += max(ext[k], 0)
                r0 += unroll * nthreads
        if lookback and not by_ticket and nblocks > 1 and tid == 0:
            t = cuda.atomic.add(ws, 0, 1)  # the epoch, after this block's gathers are issued
            ticket_cell[0] = t
            if (t & 0xFFFF) == nblocks - 1:
                cuda.atomic.add(ws, 0, 65536 - nblocks)
        if lut_len > 0 and not packed:
            for k in range(items):  # round 3: the LUT (a negative slot passes untranslated)
                if seed[k] >= 0:
                    seed[k] = lut[min(seed[k], lut_len - 1)]
        s0 = cuda.shared.array(slots, np.int64)
        s1 = cuda.shared.array(slots, np.int64)
        s2 = cuda.shared.array(slots, np.int64)
        s3 = cuda.shared.array(slots, np.int64)
        totals = cuda.shared.array(2, np.int64)
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
        if packed and nblocks > 1:
            cuda.syncthreads()  # the scan's last reads of s2 and s3 are done
            mine = PACKED + 8 + (ticket_cell[0] >> 16 & 1) * SET_WORDS
            other = PACKED + 8 + ((ticket_cell[0] >> 16) + 1 & 1) * SET_WORDS
            if tid == nthreads - 1:  # four words, each READY | 32 bits: its own flag
                cuda.atomic.exch(ws, mine + 4 * blk, (1 << 32) | (inc_v & 0xFFFFFFFF))
                cuda.atomic.exch(ws, mine + 4 * blk + 1, (1 << 32) | (inc_v >> 32 & 0xFFFFFFFF))
                cuda.atomic.exch(ws, mine + 4 * blk + 2, (1 << 32) | (inc_w & 0xFFFFFFFF))
                cuda.atomic.exch(ws, mine + 4 * blk + 3, (1 << 32) | (inc_w >> 32 & 0xFFFFFFFF))
            c = tid
            while c < SET_WORDS:  # this block's share of the other set, for the next launch
                if (c >> 2) % nblocks == blk:
                    ws[other + c] = 0
                c += nthreads
        if lut_len > 0 and packed:
            for k in range(items):  # round 3, after publishing
                if seed[k] >= 0:
                    seed[k] = lut[min(seed[k], lut_len - 1)]
        if packed and nblocks > 1:
            acc_v = 0  # every thread a word of the earlier tiles' four each, one load a word
            acc_w = 0
            j = tid
            while j < 4 * blk:
                word = poll(ws, mine + j)
                spins = 0  # bounded: wrong outputs, never a hang
                while word >> 32 != 1 and spins < SPIN_LIMIT:
                    word = poll(ws, mine + j)
                    spins += 1
                half = word & 0xFFFFFFFF
                if j & 1:
                    half = half << 32
                if j & 2:
                    acc_w += half
                else:
                    acc_v += half
                j += nthreads
            cuda.syncthreads()  # s2 and s3 are free again
            if use_shuffle:
                d = 16
                while d > 0:
                    acc_v += cuda.shfl_down_sync(full_mask, acc_v, d)
                    acc_w += cuda.shfl_down_sync(full_mask, acc_w, d)
                    d //= 2
                if tid & 31 == 0:
                    s2[tid >> 5] = acc_v
                    s3[tid >> 5] = acc_w
                used = nthreads >> 5
            else:
                s2[tid] = acc_v
                s3[tid] = acc_w
                used = nthreads
            cuda.syncthreads()
            base_v = 0
            base_w = 0
            for j in range(used):
                base_v += s2[j]
                base_w += s3[j]
            if tid == 0 and (ticket_cell[0] & 0xFFFF) == nblocks - 1:
                cuda.atomic.add(ws, ticket_word, 65536 - nblocks)
        if lookback and nblocks > 1:
            cuda.syncthreads()  # the scan's last reads of s2 and s3 are done
            if not by_ticket:
                epoch = ticket_cell[0] >> 16
            tag = epoch + 1
            if tid == nthreads - 1:  # publish this tile's totals, then its flag
                ws[AGG_V + blk] = inc_v
                ws[AGG_W + blk] = inc_w
                cuda.threadfence()
                cuda.atomic.exch(ws, FLAGS + blk, tag)
            if tid < 32:  # warp 0 sums the totals of every earlier tile
                acc_v = 0
                acc_w = 0
                j = tid
                while j < blk:
                    spins = 0  # bounded: wrong outputs, never a hang
                    while cuda.atomic.add(ws, FLAGS + j, 0) != tag and spins < SPIN_LIMIT:
                        spins += 1
                    cuda.threadfence()
                    acc_v += cuda.atomic.add(ws, AGG_V + j, 0)
                    acc_w += cuda.atomic.add(ws, AGG_W + j, 0)
                    j += 32
                s2[tid] = acc_v
                s3[tid] = acc_w
            cuda.syncthreads()
            base_v = 0
            base_w = 0
            for j in range(32):
                base_v += s2[j]
                base_w += s3[j]
        inc_v += base_v
        inc_w += base_w
        run_v = inc_v - own_v
        run_w = inc_w - own_w
        for k in range(items):  # seeds and offsets
            if k < per and begin + k < hi:
                out_seed[begin + k] = seed[k]
                out_verify[begin + k] = run_v
                out_write[begin + k] = run_w
                run_v += vlen[k]
                run_w += wlen[k]
        if tid == nthreads - 1 and blk == nblocks - 1:
            out_verify[bs] = inc_v
            out_write[bs] = inc_w
            valid = min(inc_v, capacity)
            out_num_valid[0] = ((valid + 0x80000000) & 0xFFFFFFFF) - 0x80000000
            out_enable[0] = 0 if inc_v > capacity else 1
            out_reqs[0] = bs

    return plan_offsets
