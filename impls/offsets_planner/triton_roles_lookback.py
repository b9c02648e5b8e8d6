"""The ``roles-lookback`` one-pass Triton candidate (spec sections 5 and 6): the seed programs of
:mod:`impls.offsets_planner.triton_roles`, and the scan spread over ``ceil(bs / STILE)`` scan
programs that pass their totals on by a decoupled look-back.

A single scan program reads every request of the batch from one multiprocessor, which at bs 4096
costs more than the whole gather chain; here scan program j reads only its ``STILE`` lanes. The
grid is the scan programs first (program j scans tile j), then the seed programs. Scan program j:

* draws a ticket (``atomic_add`` on word 0, relaxed, issued after its request loads; word 0 is
  ``epoch << 16 | tickets``, and the program that draws the last ticket adds
  ``(1 << 16) - scan programs``: the epoch advances, the count returns to 0); with
  ``EPOCH_LOAD`` it reads word 0 with a volatile load beside its request loads instead and draws
  the ticket after its outputs (each thread's load has returned before the barrier that precedes
  the ticket, so no program of the launch can see the next epoch);
* publishes its tile's two int64 totals as four words ``READY | 32 bits`` into set ``epoch & 1``
  with plain stores (each word its own flag and single-copy atomic: no fence, no flag-then-value
  round trip; global stores go through to L2, where the volatile polls read);
* reads the four words of every earlier tile with one volatile vector load a poll (``EARLY_POLL``:
  the first poll issued right after its own words, before its tile's scan, so that the scan runs
  while the poll is out); if some are still missing after :data:`SPIN_LIMIT` polls it computes
  its carry the slow way instead (the lengths of every earlier lane, read from the request
  vectors), so the outputs never depend on the grid being resident or on timing, only its speed
  does;
* scans its tile; the last scan program writes the totals and the three scalars;
* then, off the path to its outputs, zeroes its contiguous share of the other set (word c goes to
  program ``c * scan programs // words``), which the next launch uses (it finds zeros there, i.e.
  nothing ready).

Workspace: :func:`workspace`, int64 [:data:`WORKSPACE_LEN`] per device, zeroed once before any
graph capture and kept valid by the kernel (also under CUDA-graph replay); one launch at a time
per workspace (one stream); a launch killed midway leaves it invalid (:func:`reset_workspace`).
"""

from __future__ import annotations

from impls.offsets_planner import triton_planner as tp  # first: chooses the interpreter without CUDA
from impls.offsets_planner import triton_roles
from impls.offsets_planner.workspaces import Workspaces

triton, tl = tp.triton, tp.tl
MAX_SCAN_PROGRAMS = 128
SETS_AT = 8
WORKSPACE_LEN = SETS_AT + 2 * MAX_SCAN_PROGRAMS * 4
READY = 1 << 32
SPIN_LIMIT = 64
"""Polls of the earlier tiles' words before a scan program computes its carry itself."""

if triton is not None:
    _SETS_AT_C = tl.constexpr(SETS_AT)
    _SET_WORDS_C = tl.constexpr(MAX_SCAN_PROGRAMS * 4)
    _SPIN_LIMIT_C = tl.constexpr(SPIN_LIMIT)

    @triton.jit
    def _scan_tile(rpi_ptr, prefix_ptr, extend_ptr, verify_ptr, write_ptr, num_valid_ptr,
                   enable_ptr, reqs_ptr, ws_ptr, j, nscan, bs, window, capacity,
                   BLOCK: tl.constexpr, STILE: tl.constexpr, NPROG: tl.constexpr,
                   SLOW_CARRY: tl.constexpr, JOINED: tl.constexpr, EARLY_POLL: tl.constexpr,
                   EPOCH_LOAD: tl.constexpr):
        start = j.to(tl.int64) * STILE
        lane = start + tl.arange(0, STILE)
        live = lane < bs
        if EPOCH_LOAD:  # the epoch by a load beside the request loads; the ticket comes last
            epoch = tl.load(ws_ptr, volatile=True) >> 16
        _r, _p, _a, verify_len, write_len = tp._lengths(
            rpi_ptr, prefix_ptr, extend_ptr, lane, live, window)
        if not EPOCH_LOAD:
            # after the loads are issued: a scalar atomic's result reaches the program through a
            # barrier, which would hold the loads back by a round trip if it came first
            ticket = tl.atomic_add(ws_ptr, 1, sem="relaxed")
            epoch = ticket >> 16
        if JOINED:  # both sides as [STILE, 2]: one reduction and one scan for the two
            lens = tl.join(verify_len, write_len)
            own_v, own_w = tl.split(tl.sum(lens, axis=0))
        else:
            own_v = tl.sum(verify_len, axis=0)
            own_w = tl.sum(write_len, axis=0)
        mine = _SETS_AT_C + ((epoch & 1) * _SET_WORDS_C)
        other = _SETS_AT_C + (((epoch + 1) & 1) * _SET_WORDS_C)
        k = tl.arange(0, 4)
        total = tl.where(k < 2, own_v + k * 0, own_w + k * 0)
        half = tl.where((k & 1) == 0, total & 0xFFFFFFFF, (total >> 32) & 0xFFFFFFFF)
        tl.store(ws_ptr + mine + j * 4 + k, half | (1 << 32))  # global stores reach L2
        if not EPOCH_LOAD:
            if (ticket & 0xFFFF) == nscan - 1:  # the last ticket: next epoch, count back to 0
                tl.atomic_add(ws_ptr, 65536 - nscan, sem="relaxed")
        w = tl.arange(0, NPROG * 4)
        before = (w // 4) < j
        if EARLY_POLL:  # in flight while the tile is scanned
            poll = tl.load(ws_ptr + mine + w, mask=before, other=1 << 32, volatile=True)
        if JOINED:
            verify_excl, write_excl = tl.split(tl.cumsum(lens, axis=0) - lens)
        else:
            verify_excl = tl.cumsum(verify_len, axis=0) - verify_len
            write_excl = tl.cumsum(write_len, axis=0) - write_len
        if not EARLY_POLL:
            poll = tl.load(ws_ptr + mine + w, mask=before, other=1 << 32, volatile=True)
        waiting = tl.sum(tl.where((poll >> 32) != 1, 1, 0), axis=0)
        spins = 0
        while (waiting > 0) & (spins < _SPIN_LIMIT_C):
            poll = tl.load(ws_ptr + mine + w, mask=before, other=1 << 32, volatile=True)
            waiting = tl.sum(tl.where((poll >> 32) != 1, 1, 0), axis=0)
            spins += 1
        value = poll & 0xFFFFFFFF
        if JOINED:  # the four word sums in one reduction: [[v lo, v hi], [w lo, w hi]]
            halves = tl.reshape(tl.sum(tl.reshape(value, (NPROG, 4)), axis=0), (2, 2))
            low, high = tl.split(halves)
            carry_v, carry_w = tl.split(low + (high << 32))
        else:
            carry_v = (tl.sum(tl.where((w & 3) == 0, value, 0), axis=0)
                       + (tl.sum(tl.where((w & 3) == 1, value, 0), axis=0) << 32))
            carry_w = (tl.sum(tl.where((w & 3) == 2, value, 0), axis=0)
                       + (tl.sum(tl.where((w & 3) == 3, value, 0), axis=0) << 32))
        if (waiting > 0) | SLOW_CARRY:  # an earlier tile never showed: its lengths from the request vectors
            every = tl.arange(0, BLOCK)
            _r2, _p2, _a2, v_before, w_before = tp._lengths(
                rpi_ptr, prefix_ptr, extend_ptr, every, every < start, window)
            carry_v = tl.sum(v_before, axis=0)
            carry_w = tl.sum(w_before, axis=0)
        tl.store(verify_ptr + lane, carry_v + verify_excl, mask=live)
        tl.store(write_ptr + lane, carry_w + write_excl, mask=live)
        if j == nscan - 1:  # the totals and the three scalars, as scalars
            total_v = carry_v + own_v
            tl.store(verify_ptr + bs, total_v)
            tl.store(write_ptr + bs, carry_w + own_w)
            tl.store(num_valid_ptr, tl.minimum(total_v, capacity).to(tl.int32))
            tl.store(enable_ptr, tl.where(total_v > capacity, 0, 1).to(tl.int32))
            tl.store(reqs_ptr, bs.to(tl.int32))
        c = tl.arange(0, _SET_WORDS_C)  # after the outputs: the other set, for the next launch
        tl.store(ws_ptr + other + c, c * 0, mask=(c * nscan.to(tl.int32)) // _SET_WORDS_C == j)
        if EPOCH_LOAD:  # every thread's epoch load has returned (its zeroing store's address
            # needs it) before this barrier, and so before the ticket: the epoch cannot advance
            # before every program of this launch has read it
            tl.debug_barrier()
            ticket = tl.atomic_add(ws_ptr, 1, sem="relaxed")
            if (ticket & 0xFFFF) == nscan - 1:  # the last ticket: next epoch, count back to 0
                tl.atomic_add(ws_ptr, 65536 - nscan, sem="relaxed")

    @triton.jit(do_not_specialize=tp._INT_ARGS, do_not_specialize_on_alignment=tp._PTR_ARGS)
    def _roles_lookback_kernel(
        rpi_ptr, prefix_ptr, extend_ptr, table_ptr, lut_ptr,
        verify_ptr, write_ptr, seed_ptr, num_valid_ptr, enable_ptr, reqs_ptr, ws_ptr,
        bs: tl.int64, stride0: tl.int64, max_reqs: tl.int64, max_seq_len: tl.int64,
        lut_len: tl.int64, window: tl.int64, capacity: tl.int64,
        BLOCK: tl.constexpr, STILE: tl.constexpr, TILE: tl.constexpr, HAS_LUT: tl.constexpr,
        NPROG: tl.constexpr, SLOW_CARRY: tl.constexpr, JOINED: tl.constexpr,
        EARLY_POLL: tl.constexpr = False, EPOCH_LOAD: tl.constexpr = False,
    ):
        pid = tl.program_id(0)
        nscan = tl.maximum(tl.cdiv(bs, STILE), 1)
        if pid < nscan:
            _scan_tile(rpi_ptr, prefix_ptr, extend_ptr, verify_ptr, write_ptr, num_valid_ptr,
                       enable_ptr, reqs_ptr, ws_ptr, pid, nscan, bs, window, capacity, BLOCK,
                       STILE, NPROG, SLOW_CARRY, JOINED, EARLY_POLL, EPOCH_LOAD)
        else:
            triton_roles._seed_part(rpi_ptr, prefix_ptr, extend_ptr, table_ptr, lut_ptr,
                                    seed_ptr, pid - nscan, bs, stride0, max_reqs, max_seq_len,
                                    lut_len, TILE, HAS_LUT)

_WORKSPACES = Workspaces(WORKSPACE_LEN)
workspace = _WORKSPACES.get
"""``workspace(device)``: ``device``'s workspace, int64 [:data:`WORKSPACE_LEN`], zeroed when first
made (outside any graph capture), then kept valid by the kernel itself (module docstring)."""
existing_workspace = _WORKSPACES.existing
reset_workspace = _WORKSPACES.reset


def shape(bs: int, tile: int | None, scan_tile: int | None, num_warps: int | None,
          ) -> tuple[int, int, int, int, int]:
    """``(BLOCK, STILE, TILE, num_warps, grid)``: ``ceil(bs / STILE)`` scan programs (at least
    one), then ``ceil(bs / TILE)`` seed programs.

    Raises:
        ValueError: bs outside [0, 4096]; a tile or scan tile that is not a power of two in
            [32, 4096]; more than 128 programs of either role.
    """
    if not 0 <= bs <= 4096:
        raise ValueError(f"bs={bs} must be in [0, 4096]")
    block = max(32, 1 << max(0, bs - 1).bit_length())
    tile, scan_tile = tile or 64, scan_tile or 512
    for name, value in (("tile", tile), ("scan_tile", scan_tile)):
        if value < 32 or value > 4096 or value & (value - 1):
            raise ValueError(f"{name}={value} must be a power of two in [32, 4096]")
    scanners, seeders = max(1, -(-bs // scan_tile)), -(-bs // tile)
    if max(scanners, seeders) > MAX_SCAN_PROGRAMS:
        raise ValueError(f"{max(scanners, seeders)} programs of one role exceed 128")
    warps = num_warps or (4 if scan_tile <= 256 else 8)
    return block, scan_tile, tile, warps, scanners + seeders


def launch(args: tuple, *, bs: int, tile: int | None, scan_tile: int | None,
           num_warps: int | None, has_lut: bool, slow_carry: bool = False, joined: bool = False,
           early_poll: bool = False, epoch_load: bool = False):
    """Launch on ``args`` (the five inputs, the six outputs, then the seven int64 scalars of
    :func:`impls.offsets_planner.triton_one_pass.plan_launch`); the workspace is this module's.
    ``slow_carry``: every scan program takes the path of a missing earlier tile (for tests);
    ``joined``: a scan program reduces and scans both sides as one [STILE, 2] tensor and sums the
    earlier tiles' four words in one reduction (fewer block-wide barriers; the planner's);
    ``early_poll``: the first poll of the earlier tiles' words goes out before the tile's scan;
    ``epoch_load``: a scan program reads the epoch with a load issued beside its request loads and
    draws its ticket last, after its outputs (the ticket's atomic off the path to them).
    """
    block, scan_tile, tile, warps, grid = shape(bs, tile, scan_tile, num_warps)
    ws = workspace(args[0].device)
    nprog = max(2, block // scan_tile)
    return _roles_lookback_kernel[(grid,)](*args[:11], ws, *args[11:], BLOCK=block,
                                           STILE=scan_tile, TILE=tile, HAS_LUT=has_lut,
                                           NPROG=nprog, SLOW_CARRY=slow_carry,
                                           JOINED=joined, EARLY_POLL=early_poll,
                                           EPOCH_LOAD=epoch_load, num_warps=warps)
