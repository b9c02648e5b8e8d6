"""The one-pass Triton kernel of :mod:`impls.offsets_planner.triton_one_pass` (its ``single``,
``blocked``, ``blocked-unrolled``, ``lookback`` and ``lookback-pid`` designs; spec sections 5 and
6), and the look-back workspace its programs share.

Each launch's only dependent round trips are the chain's: the three request values, then the table
entry, then the LUT entry. Every load and store is masked exactly as in
:mod:`impls.offsets_planner.triton_planner` (its ``_lengths`` is reused); what changes is the order of the loads
and where the carries come from. No store precedes a gather: a store could alias the table or the
LUT as far as the compiler knows, so a gather placed after the offsets' stores waits for the scan.
The carry of a program is the lengths of every lane before its tile: re-read from the request
values (``TILE < BLOCK``: one ``BLOCK``-wide vector, or with ``UNROLLED`` a static loop of one
tile-wide load per earlier tile, issued beside the tile's own inputs), or, with ``LOOKBACK``, the
totals the earlier tiles published.

The look-back: ``ceil(bs / TILE)`` programs share a workspace (:func:`workspace`, int64
[:data:`WORKSPACE_LEN`] per device, zeroed once). With ``TICKET`` (``lookback``) a program takes
its tile by ticket (``atomic_add`` on word 0: tickets are handed out in arrival order, so every
tile before a waiting one belongs to a program that has started), publishes its tile's two length
totals and a flag tagged with the launch's epoch, gathers its table entries, then spins until the
flags of every tile before it carry this epoch and sums their totals. Word 0 is
``epoch << 16 | tickets``; the program that draws the last ticket adds ``(1 << 16) - grid``: the
epoch advances and the count returns to 0, so the next launch (same stream, after this one) finds
stale flags with an old tag and a zero count. The workspace is thus valid under CUDA-graph replay
with no reset kernel; a launch that is killed midway leaves it invalid (reallocate:
:func:`reset_workspace`). One launch at a time per workspace (one stream), as a server's planning
step is. Without ``TICKET`` (``lookback-pid``) the tile is the program id and the ticket (still
taken, for the epoch) is issued after the inputs' loads, so it costs no dependent round trip
before them; an earlier tile's program is then not known to have started, which relies on the
whole grid being resident at once. The bounded spin (:data:`SPIN_LIMIT`) turns a violation into
wrong outputs, not a hang.

The program that owns the last tile writes the totals and the three scalars through one-lane
masked vector stores (triton#5048), as the default planner does. Mode: the planner's, imported
first.
"""

from __future__ import annotations

from impls.offsets_planner import triton_planner as tp  # first: chooses the interpreter without CUDA
from impls.offsets_planner.workspaces import Workspaces

triton, tl = tp.triton, tp.tl

MAX_PROGRAMS = 128
"""Most programs of a ``blocked`` or ``lookback`` launch (4096 lanes / 32-lane tiles)."""
_FLAGS, _AGG_V, _AGG_W = 8, 8 + MAX_PROGRAMS, 8 + 2 * MAX_PROGRAMS
SPIN_LIMIT = 1 << 12
"""Most polls of the flags before a look-back program gives up (its outputs are then wrong, which
a check sees, instead of a hang that would take the GPU run with it). 4096 polls of about 1 us:
a few ms, against the few us an earlier tile takes to publish; small, so that a sweep that meets
a violation still finishes."""
WORKSPACE_LEN = 8 + 3 * MAX_PROGRAMS
"""int64 words of the look-back workspace: the ticket/epoch word, then flags, verify totals and
write totals of each tile."""

if triton is not None:
    _lengths = tp._lengths

    @triton.jit(do_not_specialize=tp._INT_ARGS, do_not_specialize_on_alignment=tp._PTR_ARGS)
    def _one_pass_kernel(
        rpi_ptr, prefix_ptr, extend_ptr, table_ptr, lut_ptr,
        verify_ptr, write_ptr, seed_ptr, num_valid_ptr, enable_ptr, reqs_ptr, ws_ptr,
        bs: tl.int64, stride0: tl.int64, max_reqs: tl.int64, max_seq_len: tl.int64,
        lut_len: tl.int64, window: tl.int64, capacity: tl.int64,
        BLOCK: tl.constexpr, TILE: tl.constexpr, HAS_LUT: tl.constexpr,
        LOOKBACK: tl.constexpr, SPLIT: tl.constexpr, NPROG: tl.constexpr,
        TICKET: tl.constexpr, UNROLLED: tl.constexpr,
    ):
        tile_id = tl.program_id(0)
        if LOOKBACK:
            if TICKET:  # the tile by ticket: its inputs wait for the atomic
                ticket = tl.atomic_add(ws_ptr, 1)  # acq_rel, gpu scope: epoch << 16 | count
                epoch = ticket >> 16
                tile_id = (ticket & 0xFFFF).to(tl.int32)
                if tile_id == tl.num_programs(0) - 1:  # every program has its ticket
                    tl.atomic_add(ws_ptr, 65536 - tl.num_programs(0))
        start = tile_id.to(tl.int64) * TILE
        lane = start + tl.arange(0, TILE)
        live = lane < bs
        zero = (lane * 0).to(tl.int64)
        if UNROLLED:  # every earlier tile's lengths, one tile-wide load each, beside the inputs
            acc_v = zero
            acc_w = zero
            for q in tl.static_range(NPROG):
                lane_q = q * TILE + tl.arange(0, TILE)
                _r, _p, _a, v_q, w_q = _lengths(
                    rpi_ptr, prefix_ptr, extend_ptr, lane_q, lane_q < start, window)
                acc_v += v_q
                acc_w += w_q
        row = tl.load(rpi_ptr + lane, mask=live, other=0)
        prefix = tl.load(prefix_ptr + lane, mask=live, other=0)
        extend = tl.load(extend_ptr + lane, mask=live, other=0)
        if LOOKBACK:
            if not TICKET:  # the tile by program id: the ticket overlaps the inputs' loads
                ticket = tl.atomic_add(ws_ptr, 1)
                epoch = ticket >> 16
                if (ticket & 0xFFFF) == tl.num_programs(0) - 1:
                    tl.atomic_add(ws_ptr, 65536 - tl.num_programs(0))
        # Spec section 5, as impls.offsets_planner.triton_planner._lengths (which also loads): W > 0 is W.
        active = live & (row != 0)
        in_window = tl.where(window > 0, tl.minimum(prefix, zero + window), prefix)
        verify_len = tl.where(active, tl.maximum(in_window, zero), zero)
        write_len = tl.where(active, tl.maximum(extend, zero), zero)
        own_v = tl.sum(verify_len, axis=0)
        own_w = tl.sum(write_len, axis=0)
        if LOOKBACK:
            tag = epoch + 1
            tl.atomic_xchg(ws_ptr + _AGG_V_C + tile_id, own_v)
            tl.atomic_xchg(ws_ptr + _AGG_W_C + tile_id, own_w)
            tl.atomic_xchg(ws_ptr + _FLAGS_C + tile_id, tag, sem="release")
        # The table gather (spec section 6 guards), before any store and any carry.
        has_seed = active & (prefix > 0) & (write_len > 0) & (row >= 0) & (row < zero + max_reqs)
        has_seed = has_seed & (zero + max_seq_len > 0)
        pos = tl.minimum(prefix - 1, zero + (max_seq_len - 1))
        slot = tl.load(table_ptr + (row.to(tl.int64) * stride0 + pos), mask=has_seed,
                       other=0).to(tl.int64)
        carry_v = tl.sum(zero, axis=0)
        carry_w = tl.sum(zero, axis=0)
        if TILE < BLOCK:
            if LOOKBACK:
                j = tl.arange(0, NPROG)
                before = j < tile_id
                flags = tl.atomic_add(ws_ptr + _FLAGS_C + j, 0, mask=before, sem="acquire")
                waiting = tl.sum(tl.where(before & (flags != tag), 1, 0), axis=0)
                spins = 0
                while (waiting > 0) & (spins < _SPIN_LIMIT_C):  # bounded: wrong, never a hang
                    flags = tl.atomic_add(ws_ptr + _FLAGS_C + j, 0, mask=before, sem="acquire")
                    waiting = tl.sum(tl.where(before & (flags != tag), 1, 0), axis=0)
                    spins += 1
                carry_v += tl.sum(tl.load(ws_ptr + _AGG_V_C + j, mask=before, other=0,
                                          volatile=True), axis=0)
                carry_w += tl.sum(tl.load(ws_ptr + _AGG_W_C + j, mask=before, other=0,
                                          volatile=True), axis=0)
            elif UNROLLED:
                carry_v += tl.sum(acc_v, axis=0)
                carry_w += tl.sum(acc_w, axis=0)
            else:
                every = tl.arange(0, BLOCK)
                _r, _p, _a, v_before, w_before = _lengths(
                    rpi_ptr, prefix_ptr, extend_ptr, every, every < start, window)
                carry_v += tl.sum(v_before, axis=0)
                carry_w += tl.sum(w_before, axis=0)
        if HAS_LUT:
            translate = has_seed & (slot >= 0)
            index = tl.minimum(slot, zero + (lut_len - 1))
            slot = tl.where(translate, tl.load(lut_ptr + index, mask=translate, other=0), slot)
        # Scan int64 lengths only (a boolean cumsum is XOR on some builds: triton#5897).
        if SPLIT > 0:
            v2 = tl.reshape(verify_len, (TILE // SPLIT, SPLIT))
            w2 = tl.reshape(write_len, (TILE // SPLIT, SPLIT))
            v_rows = tl.cumsum(tl.sum(v2, axis=1), axis=0) - tl.sum(v2, axis=1)
            w_rows = tl.cumsum(tl.sum(w2, axis=1), axis=0) - tl.sum(w2, axis=1)
            verify_excl = tl.reshape(tl.cumsum(v2, axis=1) - v2 + v_rows[:, None], (TILE,))
            write_excl = tl.reshape(tl.cumsum(w2, axis=1) - w2 + w_rows[:, None], (TILE,))
        else:
            verify_excl = tl.cumsum(verify_len, axis=0) - verify_len
            write_excl = tl.cumsum(write_len, axis=0) - write_len
        tl.store(seed_ptr + lane, tl.where(has_seed, slot, zero - 1), mask=live)
        tl.store(verify_ptr + lane, carry_v + verify_excl, mask=live)
        tl.store(write_ptr + lane, carry_w + write_excl, mask=live)

        first_lane = tl.arange(0, TILE)
        first = (first_lane == 0) & (first_lane * 0 + tile_id == tl.num_programs(0) - 1)
        total_v = zero + (carry_v + own_v)
        tl.store(verify_ptr + bs + first_lane, total_v, mask=first)
        tl.store(write_ptr + bs + first_lane, zero + (carry_w + own_w), mask=first)
        tl.store(num_valid_ptr + first_lane, tl.minimum(total_v, zero + capacity).to(tl.int32),
                 mask=first)
        tl.store(enable_ptr + first_lane, tl.where(total_v > capacity, 0, 1).to(tl.int32),
                 mask=first)
        tl.store(reqs_ptr + first_lane, (zero + bs).to(tl.int32), mask=first)

    # offsets into the workspace, as globals the kernel reads as constants
    _FLAGS_C = tl.constexpr(_FLAGS)
    _AGG_V_C = tl.constexpr(_AGG_V)
    _AGG_W_C = tl.constexpr(_AGG_W)
    _SPIN_LIMIT_C = tl.constexpr(SPIN_LIMIT)
else:
    _one_pass_kernel = None

_WORKSPACES = Workspaces(WORKSPACE_LEN)
workspace = _WORKSPACES.get
"""``workspace(device)``: the look-back workspace of ``device``, int64 [:data:`WORKSPACE_LEN`],
zeroed when first made (outside any graph capture: call it once before capturing), then kept
valid by the kernel itself (module docstring); ``reset_workspace(device)`` zeroes it again (after
a launch that did not finish)."""
reset_workspace = _WORKSPACES.reset
