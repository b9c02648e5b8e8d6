"""The ``roles`` one-pass Triton candidate (spec sections 5 and 6): programs split by role, so that
no program waits on another and none reads a value another wrote.

A plan has two independent parts. The seeds need the chain of dependent loads (request values,
then the table entry, then the LUT entry) but no scan; the offsets and scalars need a scan of the
request values but no gather. ``roles`` gives each part its own programs in one launch:

* **seed programs** ``0 .. ceil(bs / TILE) - 1``: program p loads the request values of its
  ``TILE`` lanes, gathers their table and LUT entries and stores their seeds, which is the chain
  floor's work (:mod:`conformance.bench.chain_triton`) and nothing else: many small programs
  spread the gathers over many multiprocessors;
* **scan programs**, the last ``SCANS`` of the grid: with ``SCANS == 1`` one program loads the
  three request vectors of every lane (``BLOCK``, the smallest power of two >= bs), scans both
  lengths, stores both offsets, both totals and the three scalars; with ``SCANS == 2`` one program
  does the verify side (``req_pool_indices`` and ``prefix_lens``: verify offsets, total,
  ``num_valid``, ``enable``) and the other the write side (``req_pool_indices`` and
  ``extend_seq_lens``: write offsets, total, ``write_num_valid_reqs``), each reading two vectors.

No workspace, no atomics, no spin: valid under CUDA-graph replay and for any residency of the
grid. ``SPLIT > 0`` scans rows of ``SPLIT`` lanes and then the row totals (a two-level scan).
Every load is masked by the conditions of :mod:`impls.offsets_planner.triton_planner`; totals and
scalars go through one-lane masked vector stores (triton#5048); only int64 lengths are scanned
(triton#5897).
"""

from __future__ import annotations

from impls.offsets_planner import triton_planner as tp  # first: chooses the interpreter without CUDA

triton, tl = tp.triton, tp.tl
MAX_SEED_PROGRAMS = 128
"""Most seed programs of a launch (4096 lanes in 32-lane tiles)."""

if triton is not None:

    @triton.jit
    def _exclusive(x, BLOCK: tl.constexpr, SPLIT: tl.constexpr):
        # the exclusive scan of int64 ``x`` [BLOCK]: one cumsum, or rows of SPLIT then row totals
        if SPLIT > 0:
            x2 = tl.reshape(x, (BLOCK // SPLIT, SPLIT))
            rows = tl.sum(x2, axis=1)
            before = tl.cumsum(rows, axis=0) - rows
            out = tl.reshape(tl.cumsum(x2, axis=1) - x2 + before[:, None], (BLOCK,))
        else:
            out = tl.cumsum(x, axis=0) - x
        return out

    @triton.jit
    def _verify_side(verify_ptr, num_valid_ptr, enable_ptr, verify_len, every, live, bs,
                     capacity, BLOCK: tl.constexpr, SPLIT: tl.constexpr):
        zero = (every * 0).to(tl.int64)
        tl.store(verify_ptr + every, _exclusive(verify_len, BLOCK, SPLIT), mask=live)
        total = zero + tl.sum(verify_len, axis=0)
        first = every == 0
        tl.store(verify_ptr + bs + every, total, mask=first)
        tl.store(num_valid_ptr + every, tl.minimum(total, zero + capacity).to(tl.int32), mask=first)
        tl.store(enable_ptr + every, tl.where(total > capacity, 0, 1).to(tl.int32), mask=first)

    @triton.jit
    def _write_side(write_ptr, reqs_ptr, write_len, every, live, bs,
                    BLOCK: tl.constexpr, SPLIT: tl.constexpr):
        zero = (every * 0).to(tl.int64)
        tl.store(write_ptr + every, _exclusive(write_len, BLOCK, SPLIT), mask=live)
        first = every == 0
        tl.store(write_ptr + bs + every, zero + tl.sum(write_len, axis=0), mask=first)
        tl.store(reqs_ptr + every, (zero + bs).to(tl.int32), mask=first)

    @triton.jit
    def _seed_part(rpi_ptr, prefix_ptr, extend_ptr, table_ptr, lut_ptr, seed_ptr, pid, bs,
                   stride0, max_reqs, max_seq_len, lut_len, TILE: tl.constexpr,
                   HAS_LUT: tl.constexpr):
        lane = pid.to(tl.int64) * TILE + tl.arange(0, TILE)
        live = lane < bs
        zero = (lane * 0).to(tl.int64)
        row = tl.load(rpi_ptr + lane, mask=live, other=0)
        prefix = tl.load(prefix_ptr + lane, mask=live, other=0)
        extend = tl.load(extend_ptr + lane, mask=live, other=0)
        # spec section 5's seed; section 6's guards keep the table read in bounds
        has_seed = live & (row != 0) & (prefix > 0) & (extend > 0) & (row >= 0)
        has_seed = has_seed & (row < zero + max_reqs) & (zero + max_seq_len > 0)
        pos = tl.minimum(prefix - 1, zero + (max_seq_len - 1))
        slot = tl.load(table_ptr + (row * stride0 + pos), mask=has_seed, other=0).to(tl.int64)
        if HAS_LUT:
            translate = has_seed & (slot >= 0)
            index = tl.minimum(slot, zero + (lut_len - 1))
            slot = tl.where(translate, tl.load(lut_ptr + index, mask=translate, other=0), slot)
        tl.store(seed_ptr + lane, tl.where(has_seed, slot, zero - 1), mask=live)

    @triton.jit
    def _scan_part(rpi_ptr, prefix_ptr, extend_ptr, verify_ptr, write_ptr, num_valid_ptr,
                   enable_ptr, reqs_ptr, verify_role, bs, window, capacity,
                   BLOCK: tl.constexpr, SCANS: tl.constexpr, SPLIT: tl.constexpr):
        every = tl.arange(0, BLOCK)
        live = every < bs
        zero = (every * 0).to(tl.int64)
        if SCANS == 1:  # both sides: every load before any store
            _r, _p, _a, verify_len, write_len = tp._lengths(
                rpi_ptr, prefix_ptr, extend_ptr, every, live, window)
            _verify_side(verify_ptr, num_valid_ptr, enable_ptr, verify_len, every, live, bs,
                         capacity, BLOCK, SPLIT)
            _write_side(write_ptr, reqs_ptr, write_len, every, live, bs, BLOCK, SPLIT)
        else:
            active = live & (tl.load(rpi_ptr + every, mask=live, other=0) != 0)
            if verify_role:  # the verify side: min(prefix, W) overflows for no prefix
                prefix = tl.load(prefix_ptr + every, mask=live, other=0)
                in_window = tl.where(window > 0, tl.minimum(prefix, zero + window), prefix)
                verify_len = tl.where(active, tl.maximum(in_window, zero), zero)
                _verify_side(verify_ptr, num_valid_ptr, enable_ptr, verify_len, every, live,
                             bs, capacity, BLOCK, SPLIT)
            else:
                extend = tl.load(extend_ptr + every, mask=live, other=0)
                write_len = tl.where(active, tl.maximum(extend, zero), zero)
                _write_side(write_ptr, reqs_ptr, write_len, every, live, bs, BLOCK, SPLIT)

    @triton.jit(do_not_specialize=tp._INT_ARGS, do_not_specialize_on_alignment=tp._PTR_ARGS)
    def _roles_kernel(
        rpi_ptr, prefix_ptr, extend_ptr, table_ptr, lut_ptr,
        verify_ptr, write_ptr, seed_ptr, num_valid_ptr, enable_ptr, reqs_ptr,
        bs: tl.int64, stride0: tl.int64, max_reqs: tl.int64, max_seq_len: tl.int64,
        lut_len: tl.int64, window: tl.int64, capacity: tl.int64,
        BLOCK: tl.constexpr, TILE: tl.constexpr, HAS_LUT: tl.constexpr, SCANS: tl.constexpr,
        SPLIT: tl.constexpr,
    ):
        pid = tl.program_id(0)
        seeders = tl.num_programs(0) - SCANS
        if pid < seeders:
            _seed_part(rpi_ptr, prefix_ptr, extend_ptr, table_ptr, lut_ptr, seed_ptr, pid, bs,
                       stride0, max_reqs, max_seq_len, lut_len, TILE, HAS_LUT)
        else:
            _scan_part(rpi_ptr, prefix_ptr, extend_ptr, verify_ptr, write_ptr, num_valid_ptr,
                       enable_ptr, reqs_ptr, pid == seeders, bs, window, capacity, BLOCK, SCANS,
                       SPLIT)


def shape(bs: int, tile: int | None, num_warps: int | None, split: int, scans: int,
          ) -> tuple[int, int, int, int]:
    """``(BLOCK, TILE, num_warps, grid)`` of one launch: ``ceil(bs / TILE)`` seed programs, then
    ``scans`` scan programs of ``BLOCK`` lanes.

    Raises:
        ValueError: bs outside [0, 4096]; a tile that is not a power of two in [32, 4096]; more
            than :data:`MAX_SEED_PROGRAMS` seed programs; ``scans`` not 1 or 2; a split that is
            not a power of two dividing ``BLOCK``.
    """
    if not 0 <= bs <= 4096:
        raise ValueError(f"bs={bs} must be in [0, 4096]")
    block = max(32, 1 << max(0, bs - 1).bit_length())
    tile = tile or 64
    if tile < 32 or tile > 4096 or tile & (tile - 1):
        raise ValueError(f"tile={tile} must be a power of two in [32, 4096]")
    if scans not in (1, 2):
        raise ValueError(f"scans={scans} must be 1 or 2")
    if split and (split < 0 or split & (split - 1)):
        raise ValueError(f"split={split} must be a power of two")
    split = min(split, block) if split else 0
    seeders = -(-bs // tile)
    if seeders > MAX_SEED_PROGRAMS:
        raise ValueError(f"{seeders} seed programs exceed {MAX_SEED_PROGRAMS}")
    return block, tile, num_warps or (4 if block <= 512 else 8), seeders + scans


def launch(args: tuple, *, bs: int, tile: int | None, num_warps: int | None, split: int,
           scans: int, has_lut: bool):
    """Launch on ``args`` (the five inputs, the six outputs, then the seven int64 scalars of
    :func:`impls.offsets_planner.triton_one_pass.plan_launch`, no workspace); what Triton's launch
    returns (the compiled kernel on the GPU, None in the interpreter)."""
    block, tile, warps, grid = shape(bs, tile, num_warps, split, scans)
    return _roles_kernel[(grid,)](*args, BLOCK=block, TILE=tile, HAS_LUT=has_lut, SCANS=scans,
                                  SPLIT=min(split, block) if split else 0, num_warps=warps)
