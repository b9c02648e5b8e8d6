"""Candidate one-pass Triton kernels for the whole plan (spec sections 5 and 6), beside the
default planner (:mod:`impls.offsets_planner.triton_planner`), which they do not change.

Each candidate is one launch whose only dependent round trips are the chain's: the three request
values, then the table entry, then the LUT entry. Every load and store is masked exactly as in
:mod:`impls.offsets_planner.triton_planner` (its ``_lengths`` is reused); what changes is the order of the loads
and where the carries come from. No store precedes a gather: a store could alias the table or the
LUT as far as the compiler knows, so a gather placed after the offsets' stores waits for the scan.

Designs (:data:`DESIGNS`), chosen with ``design=`` on :func:`plan_launch`:

* ``single``: one program owns every lane (``TILE`` = the smallest power of two >= bs, at least
  32), ``tl.cumsum`` over the tile, or with ``split > 0`` a two-level scan (rows of ``split``
  lanes scanned, then the row totals);
* ``blocked``: ``ceil(bs / tile)`` programs; each loads the request values (never the table) of
  every lane before its tile and sums their lengths, issued after its own table gather so that the
  reduction overlaps the table -> LUT chain;
* ``lookback``: ``ceil(bs / tile)`` programs that share a workspace (:func:`workspace`, int64
  [:data:`WORKSPACE_LEN`] per device, zeroed once). A program takes its tile by ticket
  (``atomic_add`` on word 0: tickets are handed out in arrival order, so every tile before a
  waiting one belongs to a program that has started), publishes its tile's two length totals and
  a flag tagged with the launch's epoch, gathers its table entries, then spins until the flags of
  every tile before it carry this epoch and sums their totals. Word 0 is ``epoch << 16 | tickets``;
  the program that draws the last ticket adds ``(1 << 16) - grid``: the epoch advances and the
  count returns to 0, so the next launch (same stream, after this one) finds stale flags with an
  old tag and a zero count. The workspace is thus valid under CUDA-graph replay with no reset
  kernel; a launch that is killed midway leaves it invalid (reallocate: :func:`reset_workspace`).
  One launch at a time per workspace (one stream), as a server's planning step is;
* ``lookback-pid``: the same, but the tile is the program id and the ticket (still taken, for the
  epoch) is issued after the inputs' loads, so it costs no dependent round trip before them. An
  earlier tile's program is then not known to have started: this relies on the whole grid being
  resident at once (at most 128 small programs; an H200 has 132 SMs), which CUDA does not promise
  when other work holds the SMs. The bounded spin (:data:`SPIN_LIMIT`) turns a violation into
  wrong outputs, not a hang.

* ``blocked-unrolled``: ``blocked``, but the earlier lanes come from a static loop of one
  tile-wide load per earlier tile (at most 32), issued beside the tile's own inputs and summed
  lane-wise, one reduction at the end, instead of one ``BLOCK``-wide vector per program;
* ``lookback-packed``: a look-back whose readers need one round trip, with volatile loads and no
  RMW polls (:mod:`impls.offsets_planner.triton_packed_lookback`; one program: the plain tile);
* ``roles``: seed programs that do only the gather chain and one or two scan programs that do
  only the scans, in one launch, none waiting on another (:mod:`impls.offsets_planner.triton_roles`;
  ``tile`` is the seed programs' lanes, ``scans`` 1 or 2);
* ``roles-lookback``: the same seed programs, and scan programs of ``scan_tile`` lanes that pass
  their totals on by a look-back with a slow but exact fallback
  (:mod:`impls.offsets_planner.triton_roles_lookback`).

The program that owns the last tile writes the totals and the three scalars through one-lane
masked vector stores (triton#5048), as the default planner does.
"""

from __future__ import annotations

import torch

from impls.offsets_planner import triton_planner as tp  # first: chooses the interpreter without CUDA
from impls.offsets_planner import triton_packed_lookback as tpl
from impls.offsets_planner import triton_roles, triton_roles_lookback
from impls.offsets_planner.contract import REQUEST_INPUT_NAMES
from impls.offsets_planner.validate_cache import lookup

triton, tl = tp.triton, tp.tl
MODE = tp.MODE
DESIGNS = ("single", "blocked", "lookback", "lookback-pid", "blocked-unrolled", "lookback-packed",
           "roles", "roles-lookback")
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

_WORKSPACES: dict[str, torch.Tensor] = {}


def workspace(device: torch.device) -> torch.Tensor:
    """The look-back workspace of ``device``: int64 [:data:`WORKSPACE_LEN`], zeroed when first
    made (outside any graph capture: call it once before capturing), then kept valid by the kernel
    itself (module docstring)."""
    key = str(device)
    ws = _WORKSPACES.get(key)
    if ws is None:
        ws = _WORKSPACES[key] = torch.zeros(WORKSPACE_LEN, dtype=torch.int64, device=device)
    return ws


def reset_workspace(device: torch.device) -> None:
    """Zero ``device``'s workspace again (after a launch that did not finish)."""
    workspace(device).zero_()


def config_for(design: str, bs: int, tile: int | None, num_warps: int | None,
               split: int) -> tuple[int, int, int, int]:
    """``(BLOCK, TILE, num_warps, grid)`` of one launch.

    Raises:
        ValueError: an unknown design, a tile that is not a power of two in [32, 4096], a split
            that does not divide the tile, or more than :data:`MAX_PROGRAMS` programs.
    """
    if design not in DESIGNS:
        raise ValueError(f"unknown design {design!r}: use one of {', '.join(DESIGNS)}")
    if design == "roles":  # one scan program: the shape of triton_roles.shape
        return triton_roles.shape(bs, tile, num_warps, split, 1)
    if design == "roles-lookback":  # (BLOCK, scan tile, warps, grid)
        block, scan_tile, _tile, warps, grid = triton_roles_lookback.shape(bs, tile, None,
                                                                           num_warps)
        return block, scan_tile, warps, grid
    if not 0 <= bs <= 4096:
        raise ValueError(f"bs={bs} must be in [0, 4096]")
    block = max(32, 1 << max(0, bs - 1).bit_length())  # the smallest power of two >= bs
    if design == "single":
        tile = block
    tile = tile or 512
    if tile < 32 or tile > 4096 or tile & (tile - 1):
        raise ValueError(f"tile={tile} must be a power of two in [32, 4096]")
    if split and (split < 0 or tile % split or split & (split - 1)):
        raise ValueError(f"split={split} must be a power of two dividing tile={tile}")
    block = max(block, tile)
    grid = max(1, -(-bs // tile))
    if grid > MAX_PROGRAMS:
        raise ValueError(f"{grid} programs exceed {MAX_PROGRAMS}")
    warps = num_warps or (4 if tile <= 128 else 8 if tile <= 512 else 16)
    return block, tile, warps, grid


def plan_launch(*, design: str, tile: int | None = None, num_warps: int | None = None,
                split: int = 0, scans: int = 1, scan_tile: int | None = None,
                slow_carry: bool = False, joined: bool = False, early_poll: bool = False,
                epoch_load: bool = False, **launcher_kwargs):
    """Plan with candidate ``design`` (:data:`DESIGNS`); the launcher of spec section 3 otherwise.

    Args:
        design: one of :data:`DESIGNS` (module docstring).
        tile: lanes per program, a power of two in [32, 4096] (``single``: ignored, the whole
            batch); default 512.
        num_warps: warps per program (default by tile: 4 up to 128 lanes, 8 up to 512, else 16).
        split: 0 for ``tl.cumsum`` over the tile, else a two-level scan of rows of ``split`` lanes.
        scans: ``roles``: 1 or 2 scan programs.
        scan_tile: ``roles-lookback``: lanes per scan program (default 512).
        slow_carry: ``roles-lookback``: every scan program computes its carry from the request
            vectors (the path of a missing earlier tile; tests).
        joined: ``roles-lookback``: both sides reduced and scanned as one [scan_tile, 2] tensor.
        early_poll: ``roles-lookback``: the first poll of the earlier tiles goes out before the
            tile's scan.
        epoch_load: ``roles-lookback``: the epoch read by a load beside the request loads, the
            ticket drawn after the outputs (:func:`impls.offsets_planner.triton_roles_lookback.
            launch`).
        launcher_kwargs: the 13 keyword arguments of spec section 3 (validated by the shared,
            memoised validator, :func:`impls.offsets_planner.validate_cache.lookup`).

    Returns:
        What Triton's launch returns: on the GPU the compiled kernel (``n_regs``, ``n_spills``:
        registers and spilled registers per thread, for the sweep), in the interpreter None.

    Raises:
        PlanError: (a ``ValueError``) any check of spec section 4, before anything is launched.
        ValueError: a configuration :func:`config_for` refuses.
    """
    if MODE is None:
        raise RuntimeError(f"triton planner unavailable: {tp._UNAVAILABLE}")
    plan, buffers = lookup(launcher_kwargs)
    window = 0 if plan.swa_window_size <= 0 else min(plan.swa_window_size, tp._INT64_MAX)
    if design in ("roles", "roles-lookback"):
        args = (*(launcher_kwargs[n] for n in REQUEST_INPUT_NAMES), *buffers.tensors,
                plan.bs, plan.req_to_token_stride0, plan.max_reqs, plan.max_seq_len,
                plan.lut_len, window, min(plan.verify_capacity, tp._INT64_MAX))
        with torch.cuda.device(buffers.device) if MODE == "gpu" else _null():
            if design == "roles-lookback":
                return triton_roles_lookback.launch(
                    args, bs=plan.bs, tile=tile, scan_tile=scan_tile, num_warps=num_warps,
                    has_lut=plan.has_swa_lut, slow_carry=slow_carry, joined=joined,
                    early_poll=early_poll, epoch_load=epoch_load)
            return triton_roles.launch(args, bs=plan.bs, tile=tile, num_warps=num_warps,
                                       split=split, scans=scans, has_lut=plan.has_swa_lut)
    block, tile, warps, grid = config_for(design, plan.bs, tile, num_warps, split)
    lookback = design in ("lookback", "lookback-pid") and grid > 1
    ws = workspace(buffers.device) if lookback else buffers.tensors[-1]
    nprog = max(2, 1 << (max(1, grid) - 1).bit_length())
    args = (*(launcher_kwargs[n] for n in REQUEST_INPUT_NAMES), *buffers.tensors, ws,
            plan.bs, plan.req_to_token_stride0, plan.max_reqs, plan.max_seq_len, plan.lut_len,
            window, min(plan.verify_capacity, tp._INT64_MAX))
    with torch.cuda.device(buffers.device) if MODE == "gpu" else _null():
        if design == "lookback-packed" and grid > 1:
            args = (*args[:11], tpl.workspace(buffers.device), *args[12:])
            return tpl.launch(args, tile=tile, grid=grid, warps=warps, has_lut=plan.has_swa_lut)
        return _one_pass_kernel[(grid,)](*args, BLOCK=block, TILE=tile, HAS_LUT=plan.has_swa_lut,
                                         LOOKBACK=lookback, SPLIT=split, NPROG=nprog,
                                         TICKET=design == "lookback",
                                         UNROLLED=design == "blocked-unrolled", num_warps=warps)


class _null:
    def __enter__(self):
        return None

    def __exit__(self, *exc):
        return False


def launcher(design: str, **config):
    """A launcher of spec section 3's shape that plans with ``design`` and ``config`` (for
    ``--planner module:attr`` runs of the corpus: :data:`launch_single` and its siblings)."""
    def launch(**launcher_kwargs) -> None:
        plan_launch(design=design, **config, **launcher_kwargs)
    launch.__doc__ = f"The launcher of spec section 3, planning with design {design!r} {config}."
    return launch


launch_single = launcher("single")
launch_blocked = launcher("blocked", tile=512)
launch_lookback = launcher("lookback", tile=512)
launch_lookback_pid = launcher("lookback-pid", tile=512)
