"""The ``warp-lookback`` Numba CUDA kernel with fewer warp-wide steps on the scan blocks' path (a
candidate): the scheme, workspace, epoch, joint re-polls and exact fallback of
:mod:`impls.offsets_planner.numba_warp_lookback_kernel` (blocks of one warp: scan blocks of
``32 * items`` requests, then seed blocks of 32), with two of its warp-wide exchanges removed.

The planner's scan block is already one warp, so it has no ``syncthreads``; what sits between its
request loads and its outputs are warp-wide steps (shuffles and a vote, each a dependent step of
every lane): the ticket's broadcast, a 5-step inclusive scan of two int64 values, the broadcast of
lane 31's totals, the poll, a vote on missing words and a 5-step butterfly of two int64 values.
This kernel drops two of them:

* ``tail_publish``: lane 31, which holds the inclusive scan's totals, writes the four
  ``READY | 32 bits`` words itself (four plain stores) and, in the last block, the totals and the
  scalars; no broadcast of the totals precedes the publish (other blocks' polls wait on it);
* ``column_sums``: word ``i = lane + 32 k`` of the earlier blocks is column ``i & 3`` (verify lo,
  verify hi, write lo, write hi), the same column for every k, so a lane sums one int64 (its
  words' 32-bit halves) instead of two. A word not ready adds :data:`NOT_READY` (``1 << 40``,
  above any sum of the at most 4096 / 32 = 128 ready halves of one column, < ``2 ** 39``). Three
  xor shuffles (16, 8, 4) give every lane its column's sum and four indexed shuffles (lanes 0-3,
  independent, one step) the four sums: the carries, and a word missing when one reaches
  ``NOT_READY``. That replaces the vote and the 5-step butterfly of two values (the butterfly
  stays on the fallback path only).

Both change only how values move inside the warp, never which value a request gets: the outputs
are byte for byte those of the planner's kernel (spec sections 5 and 6 for the guards). In Numba's
simulator (no shuffles) the warp steps use shared memory and ``syncthreads``, as the planner's
kernel does there. ``count_spins`` as in that module (workspace words 1 and 2). As in
:mod:`impls.offsets_planner.numba_cuda_kernel`, ``cuda`` is a module global and everything else a
parameter or a closure value (numba#3265).
"""

from __future__ import annotations

import numpy as np
from numba import cuda

from impls.offsets_planner.numba_roles_lookback_kernel import SET_WORDS, SETS_AT, SPIN_LIMIT

WARP = 32
NOT_READY = 1 << 40
"""What a word not ready adds to its column's sum (a ready word adds its 32-bit half)."""


def build_lean_warp_lookback_kernel(*, use_shuffle: bool, padding: int, no_seed: int, items: int,
                                    poll, per_lane: int, slow_carry: bool = False,
                                    count_spins: bool = False, tail_publish: bool = True,
                                    column_sums: bool = True):
    """The kernel's Python function (for ``cuda.jit``), with the signature and launch of
    :func:`impls.offsets_planner.numba_warp_lookback_kernel.build_warp_lookback_kernel` (32
    threads a block; joint re-polls, the epoch from the ticket's atomic). ``tail_publish`` and
    ``column_sums``: the two steps of the module docstring, each on its own (both off is the
    planner's kernel with joint re-polls)."""
    chunk_c = WARP * items
    full_mask = 0xFFFFFFFF

    def plan_lean_lookback(rpi, prefix, extend, table, lut, out_verify, out_write, out_seed,
                           out_num_valid, out_enable, out_reqs, ws, bs, lut_len, window,
                           capacity, chunk, rows, cols):
        lane = cuda.threadIdx.x
        nscan = max((bs + chunk_c - 1) // chunk_c, 1)
        b = cuda.blockIdx.x
        if b >= nscan:  # a seed block: the chain floor's work, one request a lane
            r = (b - nscan) * WARP + lane
            if r < bs:
                row = rpi[r]
                p = prefix[r]
                e = extend[r]
                seed = no_seed
                if (row != padding and p > 0 and e > 0 and row >= 0 and row < rows
                        and cols > 0):  # p > 0 guards the -1 column (numba#8028)
                    seed = table[row * cols + min(p - 1, cols - 1)]
                    if lut_len > 0 and seed >= 0:  # a negative slot passes untranslated
                        seed = lut[min(seed, lut_len - 1)]
                out_seed[r] = seed
            return
        drawn = 0
        if lane == 0:
            drawn = cuda.atomic.add(ws, 0, 1)  # beside the run's loads: used after them
        lo = b * chunk_c
        begin = lo + lane * items
        vlen = cuda.local.array(items, np.int64)
        wlen = cuda.local.array(items, np.int64)
        own_v = 0
        own_w = 0
        for k in range(items):
            r = begin + k
            vlen[k] = 0
            wlen[k] = 0
            if r < bs:
                active = rpi[r] != padding
                p = prefix[r]
                e = extend[r]
                v = max(min(p, window) if window > 0 else p, 0)  # spec section 5, overflow-free
                vlen[k] = v if active else 0
                wlen[k] = max(e, 0) if active else 0
            own_v += vlen[k]
            own_w += wlen[k]
        words = cuda.local.array(per_lane, np.int64)
        s0 = cuda.shared.array(WARP, np.int64)  # the simulator's warp steps
        s1 = cuda.shared.array(WARP, np.int64)
        inc_v = own_v
        inc_w = own_w
        tot_v = 0
        tot_w = 0
        if use_shuffle:
            d = 1
            while d < WARP:
                u0 = cuda.shfl_up_sync(full_mask, inc_v, d)
                u1 = cuda.shfl_up_sync(full_mask, inc_w, d)
                if lane >= d:
                    inc_v += u0
                    inc_w += u1
                d *= 2
            if not tail_publish:
                tot_v = cuda.shfl_sync(full_mask, inc_v, WARP - 1)
                tot_w = cuda.shfl_sync(full_mask, inc_w, WARP - 1)
            ticket = cuda.shfl_sync(full_mask, drawn, 0)
        else:
            if lane == 0:
                s0[WARP - 1] = drawn  # read back below, before the scan's first store
            cuda.syncthreads()
            ticket = s0[WARP - 1]
            cuda.syncthreads()
            s0[lane] = inc_v
            s1[lane] = inc_w
            cuda.syncthreads()
            d = 1
            while d < WARP:
                u0 = s0[lane - d] if lane >= d else 0
                u1 = s1[lane - d] if lane >= d else 0
                cuda.syncthreads()
                s0[lane] += u0
                s1[lane] += u1
                cuda.syncthreads()
                d *= 2
            inc_v = s0[lane]
            inc_w = s1[lane]
            tot_v = s0[WARP - 1]
            tot_w = s1[WARP - 1]
            cuda.syncthreads()  # every lane has read them before s0 is reused
        if tail_publish:
            tot_v = inc_v  # lane 31's: the only lane that uses them
            tot_w = inc_w
        mine = SETS_AT + (ticket >> 16 & 1) * SET_WORDS
        other = SETS_AT + ((ticket >> 16) + 1 & 1) * SET_WORDS
        if tail_publish and lane == WARP - 1:  # the four self-flagged words from the totals' lane
            ws[mine + 4 * b] = (1 << 32) | (tot_v & 0xFFFFFFFF)
            ws[mine + 4 * b + 1] = (1 << 32) | (tot_v >> 32 & 0xFFFFFFFF)
            ws[mine + 4 * b + 2] = (1 << 32) | (tot_w & 0xFFFFFFFF)
            ws[mine + 4 * b + 3] = (1 << 32) | (tot_w >> 32 & 0xFFFFFFFF)
        elif not tail_publish and lane < 4:  # one word a lane: plain stores through to L2
            tot = tot_w if lane >= 2 else tot_v
            half = tot >> 32 & 0xFFFFFFFF if lane & 1 else tot & 0xFFFFFFFF
            ws[mine + 4 * b + lane] = (1 << 32) | half
        if lane == 0 and (ticket & 0xFFFF) == nscan - 1:  # last ticket:
            cuda.atomic.add(ws, 0, 65536 - nscan)  # next epoch, count back to 0
        forced = 1 if slow_carry or 4 * b > WARP * per_lane else 0
        spun = 0
        for k in range(per_lane):  # every first poll in flight at once: one round trip
            i = lane + WARP * k
            words[k] = poll(ws, mine + i) if i < 4 * b else 1 << 32
        rounds = 0  # joint re-polls: every word not ready again, all in flight at once
        pending = 0
        for k in range(per_lane):
            if words[k] >> 32 != 1:
                pending = 1
        while pending and rounds < SPIN_LIMIT:
            for k in range(per_lane):
                if words[k] >> 32 != 1:
                    words[k] = poll(ws, mine + lane + WARP * k)
                    spun += 1
            pending = 0
            for k in range(per_lane):
                if words[k] >> 32 != 1:
                    pending = 1
            rounds += 1
        acc_v = 0
        acc_w = 0
        missing = forced
        col = 0  # column_sums: this lane's column (lane & 3)
        for k in range(per_lane):
            i = lane + WARP * k
            word = words[k]
            ready = word >> 32 == 1
            half = word & 0xFFFFFFFF if i < 4 * b else 0
            col += half if ready else NOT_READY
            if not ready:
                missing = 1
            if i & 1:
                half = half << 32
            if i & 2:
                acc_w += half
            else:
                acc_v += half
        if column_sums:
            if use_shuffle:
                col += cuda.shfl_xor_sync(full_mask, col, 16)
                col += cuda.shfl_xor_sync(full_mask, col, 8)
                col += cuda.shfl_xor_sync(full_mask, col, 4)
                c0 = cuda.shfl_sync(full_mask, col, 0)
                c1 = cuda.shfl_sync(full_mask, col, 1)
                c2 = cuda.shfl_sync(full_mask, col, 2)
                c3 = cuda.shfl_sync(full_mask, col, 3)
            else:
                s0[lane] = col
                cuda.syncthreads()
                c0 = c1 = c2 = c3 = 0
                for k in range(0, WARP, 4):
                    c0 += s0[k]
                    c1 += s0[k + 1]
                    c2 += s0[k + 2]
                    c3 += s0[k + 3]
                cuda.syncthreads()
            acc_v = c0 + (c1 << 32)
            acc_w = c2 + (c3 << 32)
            any_missing = 1 if forced == 1 or max(max(c0, c1), max(c2, c3)) >= NOT_READY else 0
        elif use_shuffle:
            any_missing = cuda.any_sync(full_mask, missing)
        else:
            s0[lane] = missing
            cuda.syncthreads()
            any_missing = 0
            for k in range(WARP):
                any_missing |= s0[k]
            cuda.syncthreads()
        if any_missing:  # an earlier block never showed: a 32-strided share of every earlier request
            acc_v = 0
            acc_w = 0
            r = lane
            while r < lo:
                if rpi[r] != padding:
                    p = prefix[r]
                    acc_v += max(min(p, window) if window > 0 else p, 0)
                    acc_w += max(extend[r], 0)
                r += WARP
        if any_missing or not column_sums:  # the warp's sums in every lane
            if use_shuffle:
                d = 16
                while d > 0:
                    acc_v += cuda.shfl_xor_sync(full_mask, acc_v, d)
                    acc_w += cuda.shfl_xor_sync(full_mask, acc_w, d)
                    d >>= 1
            else:
                s0[lane] = acc_v
                s1[lane] = acc_w
                cuda.syncthreads()
                acc_v = 0
                acc_w = 0
                for k in range(WARP):
                    acc_v += s0[k]
                    acc_w += s1[k]
                cuda.syncthreads()
        if count_spins:
            if spun > 0:
                cuda.atomic.add(ws, 1, spun)
            if lane == 0 and any_missing:
                cuda.atomic.add(ws, 2, 1)
        run_v = acc_v + inc_v - own_v
        run_w = acc_w + inc_w - own_w
        for k in range(items):
            r = begin + k
            if r < bs:
                out_verify[r] = run_v
                out_write[r] = run_w
                run_v += vlen[k]
                run_w += wlen[k]
        if lane == WARP - 1 and b == nscan - 1:
            out_verify[bs] = acc_v + tot_v
            out_write[bs] = acc_w + tot_w
            valid = min(acc_v + tot_v, capacity)
            out_num_valid[0] = ((valid + 0x80000000) & 0xFFFFFFFF) - 0x80000000
            out_enable[0] = 0 if acc_v + tot_v > capacity else 1
            out_reqs[0] = bs
        c = (b * SET_WORDS + nscan - 1) // nscan + lane  # this block's share of the other set,
        while c < ((b + 1) * SET_WORDS + nscan - 1) // nscan:  # for the next launch: the words
            ws[other + c] = 0  # c with c * nscan // SET_WORDS == b
            c += WARP

    return plan_lean_lookback
