"""The ``lookback-packed`` one-pass Triton candidate (spec sections 5 and 6): a decoupled look-back
whose readers need one round trip, reached through :func:`impls.offsets_planner.triton_one_pass.plan_launch`.

``ceil(bs / TILE)`` programs; program p owns tile p (as ``lookback-pid``: it relies on the whole
grid being resident, at most 128 programs, and the bounded spin, :data:`SPIN_LIMIT`, turns a
violation into wrong outputs, not a hang). What changes against :mod:`impls.offsets_planner.triton_one_pass_kernel`:

* **one word per value and round trip.** A tile's two int64 totals are published as four words,
  each ``READY | 32 bits`` (low and high halves of the verify total, then of the write total),
  stored with relaxed atomics and no fence. A reader loads the four words of every earlier tile in
  one volatile vector load (``ld.volatile``, no RMW, so no L2 serialisation of polls) and knows
  from each word's own ready bit whether it holds a value: no flag-then-value round trip, no
  acquire fence. 48-bit values tagged with an epoch in one word would not do: spec section 6 lets
  ``prefix_lens`` be any int64 (a total of 128 of them wraps int64), and a 16-bit tag wraps after
  65536 launches, so a tile left unwritten that long would match a stale tag.
* **no tag at all: double buffering.** Two sets of 128 x 4 words; a launch uses set ``epoch & 1``
  and zeroes the whole other set (each program a share of it), which the next multi-program launch
  uses: it finds only zeros there (not ready) and its own words. The launch before it, which also
  used that set, has finished (one stream), so no reader is left. Exact for every launch count.
* **the epoch from the ticket, off the chain.** Word 0 is ``epoch << 16 | tickets`` as in
  :mod:`impls.offsets_planner.triton_one_pass_kernel`; the ticket (``atomic_add``) is issued beside the request loads and
  returns with them, and the program that draws the last one adds ``(1 << 16) - grid``. Every
  program's ticket precedes that, so every program of a launch sees the same epoch.
* **polls beside the gathers**: one poll right after publishing, one beside the LUT gather (no
  branch between), and a bounded loop only if an earlier tile is still missing after both.

Workspace: :func:`workspace`, int64 [:data:`WORKSPACE_LEN`] per device, zeroed once (before any
graph capture); a launch killed midway leaves it invalid (:func:`reset_workspace`).
"""

from __future__ import annotations

from impls.offsets_planner import triton_planner as tp  # first: chooses the interpreter without CUDA
from impls.offsets_planner.workspaces import Workspaces

triton, tl = tp.triton, tp.tl
MAX_TILES = 128
"""Most programs of a launch (4096 lanes / 32-lane tiles)."""
WORDS_PER_TILE = 4
SETS_AT = 8
"""Word 0 is the ticket/epoch word; the two sets start at word 8."""
WORKSPACE_LEN = SETS_AT + 2 * MAX_TILES * WORDS_PER_TILE
READY = 1 << 32
"""The ready bit of a published word, above its 32 value bits."""
SPIN_LIMIT = 1 << 12
"""Most polls after the first two before a program gives up (wrong outputs, not a hang)."""

if triton is not None:
    _lengths = tp._lengths
    _SETS_AT_C = tl.constexpr(SETS_AT)
    _SET_WORDS_C = tl.constexpr(MAX_TILES * WORDS_PER_TILE)
    _SPIN_LIMIT_C = tl.constexpr(SPIN_LIMIT)

    @triton.jit(do_not_specialize=tp._INT_ARGS, do_not_specialize_on_alignment=tp._PTR_ARGS)
    def _packed_kernel(
        rpi_ptr, prefix_ptr, extend_ptr, table_ptr, lut_ptr,
        verify_ptr, write_ptr, seed_ptr, num_valid_ptr, enable_ptr, reqs_ptr, ws_ptr,
        bs: tl.int64, stride0: tl.int64, max_reqs: tl.int64, max_seq_len: tl.int64,
        lut_len: tl.int64, window: tl.int64, capacity: tl.int64,
        TILE: tl.constexpr, HAS_LUT: tl.constexpr, NPROG: tl.constexpr,
    ):
        tile_id = tl.program_id(0)
        nprog = tl.num_programs(0)
        start = tile_id.to(tl.int64) * TILE
        lane = start + tl.arange(0, TILE)
        live = lane < bs
        zero = (lane * 0).to(tl.int64)
        row, prefix, active, verify_len, write_len = _lengths(
            rpi_ptr, prefix_ptr, extend_ptr, lane, live, window)
        ticket = tl.atomic_add(ws_ptr, 1)  # beside the request loads: epoch << 16 | count
        own_v = tl.sum(verify_len, axis=0)
        own_w = tl.sum(write_len, axis=0)
        # The table gather (spec section 6 guards), before any store and any carry.
        has_seed = active & (prefix > 0) & (write_len > 0) & (row >= 0) & (row < zero + max_reqs)
        has_seed = has_seed & (zero + max_seq_len > 0)
        pos = tl.minimum(prefix - 1, zero + (max_seq_len - 1))
        slot = tl.load(table_ptr + (row.to(tl.int64) * stride0 + pos), mask=has_seed,
                       other=0).to(tl.int64)
        mine = _SETS_AT_C + (((ticket >> 16) & 1) * _SET_WORDS_C)
        other = _SETS_AT_C + ((((ticket >> 16) + 1) & 1) * _SET_WORDS_C)
        # publish: READY | low 32, READY | high 32 of each total (no fence: each word is its flag)
        k = tl.arange(0, 4)
        total = tl.where(k < 2, own_v + k * 0, own_w + k * 0)
        half = tl.where((k & 1) == 0, total & 0xFFFFFFFF, (total >> 32) & 0xFFFFFFFF)
        tl.atomic_xchg(ws_ptr + mine + tile_id * 4 + k, half | (1 << 32), sem="relaxed")
        # zero this program's share of the other set (the next launch's)
        c = tl.arange(0, _SET_WORDS_C)
        tl.store(ws_ptr + other + c, c * 0, mask=((c // 4) % nprog) == tile_id)
        # every earlier tile's four words: one load a poll, each word its own flag
        w = tl.arange(0, NPROG * 4)
        before = (w // 4) < tile_id
        poll = tl.load(ws_ptr + mine + w, mask=before, other=1 << 32, volatile=True)
        if HAS_LUT:
            translate = has_seed & (slot >= 0)
            index = tl.minimum(slot, zero + (lut_len - 1))
            slot = tl.where(translate, tl.load(lut_ptr + index, mask=translate, other=0), slot)
        again = tl.load(ws_ptr + mine + w, mask=before, other=1 << 32, volatile=True)
        poll = tl.where((poll >> 32) == 1, poll, again)
        waiting = tl.sum(tl.where((poll >> 32) != 1, 1, 0), axis=0)
        spins = 0
        while (waiting > 0) & (spins < _SPIN_LIMIT_C):  # bounded: wrong, never a hang
            poll = tl.load(ws_ptr + mine + w, mask=before, other=1 << 32, volatile=True)
            waiting = tl.sum(tl.where((poll >> 32) != 1, 1, 0), axis=0)
            spins += 1
        value = poll & 0xFFFFFFFF
        lo_v = tl.sum(tl.where((w & 3) == 0, value, 0), axis=0)
        hi_v = tl.sum(tl.where((w & 3) == 1, value, 0), axis=0)
        lo_w = tl.sum(tl.where((w & 3) == 2, value, 0), axis=0)
        hi_w = tl.sum(tl.where((w & 3) == 3, value, 0), axis=0)
        carry_v = lo_v + (hi_v << 32)  # mod 2^64: the int64 sum of the earlier totals
        carry_w = lo_w + (hi_w << 32)
        if (ticket & 0xFFFF) == nprog - 1:  # the last ticket: next epoch, count back to 0
            tl.atomic_add(ws_ptr, 65536 - nprog)
        # Scan int64 lengths only (a boolean cumsum is XOR on some builds: triton#5897).
        verify_excl = tl.cumsum(verify_len, axis=0) - verify_len
        write_excl = tl.cumsum(write_len, axis=0) - write_len
        tl.store(seed_ptr + lane, tl.where(has_seed, slot, zero - 1), mask=live)
        tl.store(verify_ptr + lane, carry_v + verify_excl, mask=live)
        tl.store(write_ptr + lane, carry_w + write_excl, mask=live)

        first_lane = tl.arange(0, TILE)
        first = (first_lane == 0) & (first_lane * 0 + tile_id == nprog - 1)
        total_v = zero + (carry_v + own_v)
        tl.store(verify_ptr + bs + first_lane, total_v, mask=first)
        tl.store(write_ptr + bs + first_lane, zero + (carry_w + own_w), mask=first)
        tl.store(num_valid_ptr + first_lane, tl.minimum(total_v, zero + capacity).to(tl.int32),
                 mask=first)
        tl.store(enable_ptr + first_lane, tl.where(total_v > capacity, 0, 1).to(tl.int32),
                 mask=first)
        tl.store(reqs_ptr + first_lane, (zero + bs).to(tl.int32), mask=first)

_WORKSPACES = Workspaces(WORKSPACE_LEN)
workspace = _WORKSPACES.get
"""``workspace(device)``: ``device``'s workspace, int64 [:data:`WORKSPACE_LEN`], zeroed when
first made (outside any graph capture), then kept valid by the kernel itself (module docstring);
``reset_workspace(device)`` zeroes it again (after a launch that did not finish)."""
reset_workspace = _WORKSPACES.reset


def launch(args: tuple, *, tile: int, grid: int, warps: int, has_lut: bool):
    """Launch the kernel on ``args``: the five inputs, the six outputs, :func:`workspace`, then the
    seven int64 scalars of :func:`impls.offsets_planner.triton_one_pass.plan_launch`; what Triton's launch
    returns (the compiled kernel on the GPU, None in the interpreter)."""
    nprog = max(2, 1 << (max(1, grid) - 1).bit_length())
    return _packed_kernel[(grid,)](*args, TILE=tile, HAS_LUT=has_lut, NPROG=nprog,
                                   num_warps=warps)
