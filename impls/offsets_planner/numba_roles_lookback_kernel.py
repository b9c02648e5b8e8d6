"""The ``roles-lookback`` one-pass Numba CUDA candidate kernel, one source for the GPU and the
simulator: the scheme of :mod:`impls.offsets_planner.triton_roles_lookback` (its docstring gives
the workspace, the epoch and the fallback) with Numba's blocks.

The grid is ``ceil(bs / chunk)`` scan blocks (at least one), then ``ceil(bs / seed_tile)`` seed
blocks, thread t < seed_tile of seed block s planning the seed of request ``s * seed_tile + t`` (as
:mod:`impls.offsets_planner.numba_roles_kernel`). Scan block j plans requests
``[j * chunk, (j + 1) * chunk)``, thread t a run of ``ceil(chunk / blockDim.x)`` of them: thread 0
draws the ticket beside the run's loads; one block-wide scan (warp scans, then warp 0 scans the
warp totals); warp 0 publishes the block's totals as four ``READY | 32 bits`` words as soon as it
has them, before the other warps add their warp's base, and issues its first poll of every earlier
block's words at once (one volatile load a word, up to ``per_lane`` a lane, so the polls cost one round
trip whatever the block's index), then polls again any word not ready (at most ``SPIN_LIMIT``
polls each) and sums them with warp shuffles; if one never shows, every thread sums the lengths of
the earlier requests itself. After its outputs every block zeroes its contiguous share of the
other set (word c goes to block ``c * blocks // SET_WORDS``), which the next launch uses: off the
path to the outputs. As in
:mod:`impls.offsets_planner.numba_cuda_kernel`, ``cuda`` is a module global and everything else a
parameter or a closure value (numba#3265). Guards: spec section 6.
"""

from __future__ import annotations

import numpy as np
from numba import cuda

from impls.offsets_planner.workspaces import Workspaces

SETS_AT = 8
SET_WORDS = 4 * 128
WORKSPACE_LEN = SETS_AT + 2 * SET_WORDS
SPIN_LIMIT = 64
_WORKSPACES = Workspaces(WORKSPACE_LEN)
workspace = _WORKSPACES.get
"""``workspace(device)``: ``device``'s workspace, int64 [:data:`WORKSPACE_LEN`], zeroed when first
made (outside any graph capture), then kept valid by the kernel itself (module docstring)."""
existing_workspace = _WORKSPACES.existing
reset_workspace = _WORKSPACES.reset


def build_roles_lookback_kernel(*, use_shuffle: bool, padding: int, no_seed: int,
                                max_threads: int, items: int, poll, slow_carry: bool = False,
                                per_lane: int = SET_WORDS // 32, seed_tile: int = 0,
                                fixed_chunk: int = 0, poll_delay_ns: int = 0,
                                count_spins: bool = False):
    """The kernel's Python function (for ``cuda.jit``), with the signature of
    :data:`impls.offsets_planner.numba_cuda_kernel.ARRAY_SIGNATURE` (``chunk``: a scan block's
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
        per_lane: the most earlier-block words one lane of warp 0 polls (``4 * blocks / 32``
            rounded up; default: enough for 128 scan blocks). Words past it are never read: a
            launch with more scan blocks than ``8 * per_lane`` takes the fallback.
        seed_tile: requests a seed block plans (at most the block's threads; the others return at
            once); 0: ``blockDim.x``.
        fixed_chunk: the scan blocks' requests as a compile-time constant (the ``chunk`` argument
            is then ignored, and the kernel must be launched with ``max_threads`` threads): the
            divisions that place a block's requests become shifts for a power of two, instead
            of 64-bit divisions (tens of dependent instructions) before its first load; 0: the
            ``chunk`` argument and ``blockDim.x``.
        poll_delay_ns: warp 0 sleeps this long (``nanosleep``, GPU only) between publishing and
            its first poll, so that earlier blocks' words published at the same moment have
            reached L2 (a sweep candidate; 0: no sleep).
        count_spins: add warp 0's re-polls to workspace word 1 and 1 to word 2 for a block that
            took the fallback (diagnostics; words 1-7 are otherwise unused).
    """
    slots = 32 if use_shuffle else max_threads
    full_mask = 0xFFFFFFFF

    def plan_roles_lookback(rpi, prefix, extend, table, lut, out_verify, out_write, out_seed,
                            out_num_valid, out_enable, out_reqs, ws, bs, lut_len, window,
                            capacity, chunk, rows, cols):
        tid = cuda.threadIdx.x
        nthreads = max_threads if fixed_chunk > 0 else cuda.blockDim.x
        if fixed_chunk > 0:
            chunk = fixed_chunk
        nscan = max((bs + chunk - 1) // chunk, 1)
        b = cuda.blockIdx.x
        if b >= nscan:  # a seed block: the chain floor's work
            tile = seed_tile if seed_tile > 0 else nthreads
            r = (b - nscan) * tile + tid
            if tid < tile and r < bs:
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
        cell = cuda.shared.array(6, np.int64)  # ticket, missing, fallback sums, carries
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
        a0 = cuda.shared.array(32, np.int64)  # the polling lanes' sums (no shuffles)
        a1 = cuda.shared.array(32, np.int64)
        inc_v = own_v
        inc_w = own_w
        lane = tid & 31
        warp = tid >> 5
        if use_shuffle:  # each warp's inclusive scan; its last lane's sums go to s0 and s1
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
        else:  # the whole block's inclusive scan in s0 and s1
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
        ticket = cell[0]  # visible: a barrier came after thread 0 stored it
        mine = SETS_AT + (ticket >> 16 & 1) * SET_WORDS
        other = SETS_AT + ((ticket >> 16) + 1 & 1) * SET_WORDS
        if warp == 0:  # the block's totals, published, then the earlier blocks' words polled
            if use_shuffle:  # the scan over warp totals; lane 31 ends with the block's totals
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
                tot_v = t0
                tot_w = t1
            else:
                tot_v = s0[nthreads - 1]
                tot_w = s1[nthreads - 1]
            if lane == min(nthreads, 32) - 1:  # four self-flagged words, plain stores (through to L2, single-copy
                # atomic; the polls read L2)
                ws[mine + 4 * b] = (1 << 32) | (tot_v & 0xFFFFFFFF)
                ws[mine + 4 * b + 1] = (1 << 32) | (tot_v >> 32 & 0xFFFFFFFF)
                ws[mine + 4 * b + 2] = (1 << 32) | (tot_w & 0xFFFFFFFF)
                ws[mine + 4 * b + 3] = (1 << 32) | (tot_w >> 32 & 0xFFFFFFFF)
            if lane == 0 and (ticket & 0xFFFF) == nscan - 1:  # last ticket: next epoch, count 0
                cuda.atomic.add(ws, 0, 65536 - nscan)
            acc_v = 0
            acc_w = 0
            missing = 1 if slow_carry or 4 * b > 32 * per_lane else 0
            if poll_delay_ns > 0:
                cuda.nanosleep(poll_delay_ns)
            spun = 0
            words = cuda.local.array(per_lane, np.int64)
            for k in range(per_lane):  # every first poll in flight at once: one round trip
                i = lane + 32 * k
                words[k] = poll(ws, mine + i) if i < 4 * b else 1 << 32
            for k in range(per_lane):
                i = lane + 32 * k
                word = words[k]
                spins = 0
                while word >> 32 != 1 and spins < SPIN_LIMIT:
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
            if use_shuffle:  # the warp's sums in every lane, lane 0 keeps them
                d = 16
                while d > 0:
                    acc_v += cuda.shfl_xor_sync(full_mask, acc_v, d)
                    acc_w += cuda.shfl_xor_sync(full_mask, acc_w, d)
                    d >>= 1
                if lane == 0:
                    cell[4] = acc_v
                    cell[5] = acc_w
            else:
                a0[lane] = acc_v
                a1[lane] = acc_w
            if missing:
                cell[1] = 1
            if count_spins and spun > 0:
                cuda.atomic.add(ws, 1, spun)
            if lane == 0:
                cell[2] = 0
                cell[3] = 0
        cuda.syncthreads()
        if use_shuffle and warp > 0:
            inc_v += s0[warp - 1]
            inc_w += s1[warp - 1]
        base_v = 0
        base_w = 0
        if count_spins and tid == 0 and cell[1] == 1:
            cuda.atomic.add(ws, 2, 1)
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
        elif use_shuffle:
            base_v = cell[4]
            base_w = cell[5]
        else:
            for k in range(min(32, nthreads)):
                base_v += a0[k]
                base_w += a1[k]
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
        c = (b * SET_WORDS + nscan - 1) // nscan + tid  # this block's share of the other set,
        while c < ((b + 1) * SET_WORDS + nscan - 1) // nscan:  # for the next launch: the words
            ws[other + c] = 0  # c with c * nscan // SET_WORDS == b
            c += nthreads

    return plan_roles_lookback
