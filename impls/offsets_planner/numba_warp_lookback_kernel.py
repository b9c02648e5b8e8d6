"""The ``warp-lookback`` one-pass Numba CUDA kernel: the scheme of
:mod:`impls.offsets_planner.numba_roles_lookback_kernel` (decoupled look-back through the same
per-device workspace, epoch and exact fallback) with blocks of one warp, so that no block-wide
barrier or shared memory sits on the path from the request loads to the outputs.

Every block has 32 threads (one warp). The grid is ``ceil(bs / (32 * items))`` scan blocks (at
least one), then ``ceil(bs / 32)`` seed blocks, lane t of seed block s planning the seed of request
``s * 32 + t`` (the chain of dependent loads, as in ``roles-lookback``). Scan block j plans requests
``[j * 32 * items, (j + 1) * 32 * items)``, lane t a run of ``items`` consecutive ones:

* lane 0 draws the ticket (an atomic on word 0, issued beside the run's loads; ``epoch_load``:
  it reads word 0 there instead and draws the ticket after the block's outputs);
* each lane sums its run; one warp inclusive scan (shuffles) gives every lane its base within the
  block and the block's totals (lane 31's, broadcast);
* lane ``k`` < 4 publishes word ``k`` of the block's totals (``READY | 32 bits``, plain stores,
  through to L2); each lane issues its first volatile poll of up to ``per_lane`` earlier-block
  words at once (``pre_poll``, a candidate: before the warp's scan, as soon as the ticket is
  known), polls again any word not ready (at most :data:`SPIN_LIMIT` polls), and the warp
  sums them with shuffles; if a word never shows (or ``slow_carry``), every lane sums the lengths of
  a 32-strided share of the earlier requests and the warp adds them up (the outputs never depend on
  the grid being resident or on timing, only the speed does);
* lanes write their run's offsets; the last block writes the totals and the three scalars; then
  each block zeroes its contiguous share of the other set for the next launch.

In Numba's simulator (no shuffles) the warp steps use shared memory and ``syncthreads`` (a block
is the warp). ``count_spins`` (diagnostics only): the block adds its re-polls to word 1 and, if it
took the fallback, 1 to word 2 of the workspace (words 1-7 are otherwise unused). As in
:mod:`impls.offsets_planner.numba_cuda_kernel`, ``cuda`` is a module global and everything else a
parameter or a closure value (numba#3265). Guards: spec section 6.
"""

from __future__ import annotations

import numpy as np
from numba import cuda

from impls.offsets_planner.numba_roles_lookback_kernel import SET_WORDS, SETS_AT, SPIN_LIMIT

WARP = 32


def build_warp_lookback_kernel(*, use_shuffle: bool, padding: int, no_seed: int, items: int,
                               poll, per_lane: int, slow_carry: bool = False,
                               count_spins: bool = False, early_publish: bool = False,
                               joint_repoll: bool = False, epoch_load: bool = False,
                               pre_poll: bool = False):
    """The kernel's Python function (for ``cuda.jit``), with the signature of
    :data:`impls.offsets_planner.numba_cuda_kernel.ARRAY_SIGNATURE` (its ``chunk`` argument is
    ignored: a scan block's requests are ``32 * items``, a compile-time constant). Launch it with
    32 threads a block.

    Args:
        use_shuffle: warp shuffles (GPU only), else shared memory (GPU and simulator).
        padding, no_seed: spec sections 2 and 5 (0 and -1).
        items: requests one lane owns (a scan block plans ``32 * items``).
        poll: ``poll(ws, i)`` reads word i of the workspace afresh.
        per_lane: earlier-block words one lane polls at most (``ceil(4 * blocks / 32)`` for the
            largest launch); a launch with more than ``8 * per_lane`` scan blocks takes the
            fallback.
        slow_carry: every scan block takes the fallback path (tests).
        count_spins: add re-polls and fallbacks to workspace words 1 and 2 (diagnostics).
        early_publish: (shuffles; a candidate, slower on the H200: numba_cuda_planner's
            ``JOINT_REPOLL``) the block's totals by a butterfly reduction, published before the
            warp's inclusive scan, which then runs while the first polls are out; False (the
            planner's): the scan first, its last lane's totals published.
        joint_repoll: (the planner's: numba_cuda_planner's ``JOINT_REPOLL``) every word still
            not ready is polled again in one round, one round trip a round; False: a lane waits
            for each of its words in turn, a round trip each.
        epoch_load: (a candidate) lane 0 reads the epoch from word 0 with a volatile load beside
            the run's loads and draws its ticket only after the block's outputs, so that the
            ticket's atomic is off the path to them (the read and the ticket are one thread's, in
            program order on one word: the epoch cannot advance before every block of the
            launch has read it); False (the planner's): the ticket's own result gives the epoch.
        pre_poll: (a candidate; not with ``early_publish``) every lane sends its first polls as
            soon as the ticket is known, before the warp's scan and the block's own publish, so
            that the scan runs while they are out; False (the planner's): after the publish.
    """
    if pre_poll and early_publish:
        raise ValueError("pre_poll and early_publish are two orders of one step: pick one")
    chunk_c = WARP * items
    full_mask = 0xFFFFFFFF

    def plan_warp_lookback(rpi, prefix, extend, table, lut, out_verify, out_write, out_seed,
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
            if epoch_load:
                drawn = poll(ws, 0)  # the epoch; the ticket is drawn last
            else:
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
        if use_shuffle and early_publish:  # the totals in every lane, no scan yet
            tot_v = own_v
            tot_w = own_w
            d = 16
            while d > 0:
                tot_v += cuda.shfl_xor_sync(full_mask, tot_v, d)
                tot_w += cuda.shfl_xor_sync(full_mask, tot_w, d)
                d >>= 1
            ticket = cuda.shfl_sync(full_mask, drawn, 0)
        elif use_shuffle:
            if pre_poll:  # the ticket first: the first polls go out before the scan
                ticket = cuda.shfl_sync(full_mask, drawn, 0)
                first = SETS_AT + (ticket >> 16 & 1) * SET_WORDS
                for k in range(per_lane):
                    i = lane + WARP * k
                    words[k] = poll(ws, first + i) if i < 4 * b else 1 << 32
            d = 1
            while d < WARP:
                u0 = cuda.shfl_up_sync(full_mask, inc_v, d)
                u1 = cuda.shfl_up_sync(full_mask, inc_w, d)
                if lane >= d:
                    inc_v += u0
                    inc_w += u1
                d *= 2
            tot_v = cuda.shfl_sync(full_mask, inc_v, WARP - 1)
            tot_w = cuda.shfl_sync(full_mask, inc_w, WARP - 1)
            if not pre_poll:
                ticket = cuda.shfl_sync(full_mask, drawn, 0)
        else:
            if lane == 0:
                s0[WARP - 1] = drawn  # read back below, before the scan's first store
            cuda.syncthreads()
            ticket = s0[WARP - 1]
            cuda.syncthreads()
            if pre_poll:  # as on the GPU: the first polls before the scan
                first = SETS_AT + (ticket >> 16 & 1) * SET_WORDS
                for k in range(per_lane):
                    i = lane + WARP * k
                    words[k] = poll(ws, first + i) if i < 4 * b else 1 << 32
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
        mine = SETS_AT + (ticket >> 16 & 1) * SET_WORDS
        other = SETS_AT + ((ticket >> 16) + 1 & 1) * SET_WORDS
        if lane < 4:  # four self-flagged words, one a lane: plain stores through to L2
            tot = tot_w if lane >= 2 else tot_v
            half = tot >> 32 & 0xFFFFFFFF if lane & 1 else tot & 0xFFFFFFFF
            ws[mine + 4 * b + lane] = (1 << 32) | half
        if not epoch_load and lane == 0 and (ticket & 0xFFFF) == nscan - 1:  # last ticket:
            cuda.atomic.add(ws, 0, 65536 - nscan)  # next epoch, count back to 0
        acc_v = 0
        acc_w = 0
        missing = 1 if slow_carry or 4 * b > WARP * per_lane else 0
        spun = 0
        for k in range(per_lane):  # every first poll in flight at once: one round trip
            i = lane + WARP * k
            if not pre_poll:
                words[k] = poll(ws, mine + i) if i < 4 * b else 1 << 32
        if use_shuffle and early_publish:  # the block's own scan while the polls are out
            d = 1
            while d < WARP:
                u0 = cuda.shfl_up_sync(full_mask, inc_v, d)
                u1 = cuda.shfl_up_sync(full_mask, inc_w, d)
                if lane >= d:
                    inc_v += u0
                    inc_w += u1
                d *= 2
        if joint_repoll:  # each round re-polls every word not ready yet, all in flight at once
            rounds = 0
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
        for k in range(per_lane):
            i = lane + WARP * k
            word = words[k]
            spins = 0
            while not joint_repoll and word >> 32 != 1 and spins < SPIN_LIMIT:
                word = poll(ws, mine + i)
                spins += 1
            spun += spins
            if word >> 32 != 1:
                missing = 1
            half = word & 0xFFFFFFFF if i < 4 * b else 0
            if i & 1:
                half = half << 32
            if i & 2:
                acc_w += half
            else:
                acc_v += half
        if use_shuffle:
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
        if use_shuffle:  # the warp's sums in every lane
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
        if epoch_load and lane == 0:  # the ticket last: the epoch read above came first
            drawn = cuda.atomic.add(ws, 0, 1)
            if (drawn & 0xFFFF) == nscan - 1:  # last ticket: next epoch, count back to 0
                cuda.atomic.add(ws, 0, 65536 - nscan)

    return plan_warp_lookback
