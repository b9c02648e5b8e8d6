"""What :mod:`impls.offsets_planner.harness.sweeps.one_pass` times: per framework and bs, the chain floor at
each launch shape, the current planner and every one-pass candidate with its config sweep; and
the random inputs its correctness check runs.

A call is ``(label, config text, make)`` where ``make(kw)`` returns a zero-argument call of the
launch on the launcher arguments ``kw`` (spec section 3), capturable in a CUDA graph on the GPU.
"""

from __future__ import annotations

from collections.abc import Callable

import torch

from impls.offsets_planner.contract import (BY_NAME, INPUT_NAMES, OUTPUT_NAMES, REQUEST_INPUT_NAMES, SCALAR_NAMES,
                            TABLE_INPUT_NAMES)
from impls.offsets_planner.constants import SCRATCH_MIN_LEN

FRAMEWORKS = ("triton", "numba-cuda")
Make = Callable[[dict], Callable[[], object]]
Entry = tuple[str, str, Make]


def _pow2_at_least(n: int) -> int:
    return 1 << max(0, n - 1).bit_length()


def _chain_args(kw: dict):
    rpi, prefix, extend = (kw[n] for n in REQUEST_INPUT_NAMES)
    table, lut = (kw[n] for n in TABLE_INPUT_NAMES)
    lut_len = 0 if lut is None else int(lut.shape[0])
    lut = lut if lut is not None else torch.zeros(1, dtype=torch.int64, device=rpi.device)
    return rpi, prefix, extend, table, lut, kw[OUTPUT_NAMES[2]], lut_len  # the seed slots


def chain_floors(framework: str, bs: int) -> list[Entry]:
    """The chain floor (:mod:`conformance.bench.chain_triton` / ``chain_numba``) at every launch
    shape that fits bs: Triton ``BLOCK`` 32..1024 with 1-8 warps, Numba 32..1024 threads with
    array parameters and 32..128 with raw pointers."""
    top = max(32, min(1024, _pow2_at_least(bs)))
    if framework == "triton":
        shapes = [(b, w) for b, w in ((32, 1), (64, 1), (64, 2), (128, 2), (128, 4), (256, 4),
                                      (256, 8), (512, 4), (512, 8), (1024, 8)) if b <= top]
        return [("chain floor", f"BLOCK {b}, {w} warps", _triton_chain(b, w)) for b, w in shapes]
    from conformance.bench.chain_floors import POINTERS, launch_shape_text

    shapes = [(t, None) for t in (32, 64, 128, 256, 512, 1024) if t <= top] + [
        (t, POINTERS) for t in (32, 64, 128) if t <= top]
    return [("chain floor", launch_shape_text(False, t, style), _numba_chain(t, style))
            for t, style in shapes]


def _triton_chain(block: int, warps: int) -> Make:
    def make(kw):
        from conformance.bench.chain_triton import chain_kernel

        rpi, prefix, extend, table, lut, out, lut_len = _chain_args(kw)
        bs, grid = int(rpi.shape[0]), max(1, -(-int(rpi.shape[0]) // block))
        args = (rpi, prefix, extend, table, lut, out, bs, table.stride(0), table.shape[0],
                table.shape[1], lut_len)
        return lambda: chain_kernel[(grid,)](*args, BLOCK=block, HAS_LUT=lut_len > 0,
                                             num_warps=warps)
    return make


def _numba_chain(threads: int, style: str | None = None) -> Make:
    """The ``chain-numba`` floor's call (:func:`conformance.bench.chain_floors.chain_call`): Numba
    arrays, or raw pointers with ``style`` :data:`conformance.bench.chain_floors.POINTERS`."""
    def make(kw):
        from conformance.bench.chain_floors import chain_call

        return chain_call("chain-numba", kw, (threads, style))[1]
    return make


def current(framework: str) -> Entry:
    """The default planner's ``launch`` (its own configuration)."""
    def make(kw):
        if framework == "triton":
            from impls.offsets_planner.triton_planner import launch
        else:
            from impls.offsets_planner.numba_cuda_planner import launch
        return lambda: launch(**kw)
    return ("current planner", "default", make)


def _triton_candidate(design: str, **config) -> Entry:
    def make(kw):
        from impls.offsets_planner.triton_one_pass import plan_launch

        return lambda: plan_launch(design=design, **config, **kw)
    text = ", ".join(f"{k} {v}" for k, v in config.items()) or "default"
    return (f"one-pass {design}", text, make)


def _numba_candidate(design: str, **config) -> Entry:
    def make(kw):
        from impls.offsets_planner.numba_one_pass import plan_launch

        return lambda: plan_launch(design=design, **config, **kw)
    text = ", ".join(f"{k} {v}" for k, v in config.items()) or "default"
    return (f"one-pass {design}", text, make)


def _several(tile: int, bs: int, dry_run: bool) -> bool:
    """Whether a multi-program config of ``tile`` lanes a program is swept at bs: only when it
    gives more than one program; 32-lane tiles (many programs, one warp) only up to bs 512 on the
    GPU, and only they in a dry run (the smallest bs that still gives several programs)."""
    if tile >= bs:
        return False
    return tile == 32 if dry_run else (tile > 32 or bs <= 512)


def candidates(framework: str, bs: int, dry_run: bool = False) -> list[Entry]:
    """Every candidate and config for ``bs``: multi-program designs only where they give more than
    one program. ``dry_run``: one config per design (interpreter and simulator are slow)."""
    out: list[Entry] = []
    if framework == "triton":
        block = max(32, _pow2_at_least(bs))
        warps = {32: (1, 2), 64: (1, 2), 128: (2, 4)}.get(block, (4, 8, 16) if block <= 1024
                                                           else (16, 32))
        for w in warps[:1] if dry_run else warps:
            out.append(_triton_candidate("single", num_warps=w))
        if block >= 512 and not dry_run:
            out.append(_triton_candidate("single", num_warps=warps[-1], split=64))
        for tile, w in ((32, 1), (64, 2), (128, 2), (128, 4), (256, 4), (256, 8), (512, 8),
                        (512, 16)):
            if _several(tile, bs, dry_run):
                out.append(_triton_candidate("blocked", tile=tile, num_warps=w))
                out.append(_triton_candidate("lookback", tile=tile, num_warps=w))
                out.append(_triton_candidate("lookback-pid", tile=tile, num_warps=w))
                out.append(_triton_candidate("lookback-packed", tile=tile, num_warps=w))
                if bs <= 32 * tile:  # a static loop of one load per earlier tile: 32 at most
                    out.append(_triton_candidate("blocked-unrolled", tile=tile, num_warps=w))
        return out + roles_candidates(framework, bs, dry_run) + roles_lookback_candidates(
        framework, bs, dry_run)
    singles = (256, 1024) if bs > 256 else (max(32, min(1024, (bs + 31) // 32 * 32)),)
    for t in singles[:1] if dry_run else singles:
        out.append(_numba_candidate("single", threads=t))
    for threads, chunk in ((32, 32), (64, 64), (128, 128), (128, 256), (256, 256), (256, 512),
                           (512, 512), (512, 1024)):
        if _several(chunk, bs, dry_run):
            out.append(_numba_candidate("blocked", threads=threads, chunk=chunk))
            out.append(_numba_candidate("lookback", threads=threads, chunk=chunk))
            out.append(_numba_candidate("lookback-pid", threads=threads, chunk=chunk))
            out.append(_numba_candidate("lookback-packed", threads=threads, chunk=chunk))
    return out + roles_candidates(framework, bs, dry_run) + roles_lookback_candidates(
        framework, bs, dry_run)


def roles_candidates(framework: str, bs: int, dry_run: bool = False) -> list[Entry]:
    """The ``roles`` configs for ``bs``: seed tiles of 32-128 lanes (Triton) or blocks of 64-1024
    threads (Numba) that give at most 128 seed programs, one or two scan programs, warps by the
    scan's lanes; ``dry_run``: the first config only."""
    block = max(32, _pow2_at_least(bs))
    out: list[Entry] = []
    if framework == "triton":
        warps = (1, 2) if block <= 64 else (2, 4, 8) if block <= 512 else (4, 8) \
            if block <= 1024 else (4, 8, 16)
        for tile in (32, 64, 128):
            if -(-bs // tile) > 128 or (tile > 32 and tile > block):
                continue
            for w in warps:
                for scans in (1, 2):
                    out.append(_triton_candidate("roles", tile=tile, num_warps=w, scans=scans))
            if block >= 1024:
                out.append(_triton_candidate("roles", tile=tile, num_warps=warps[-1], scans=2,
                                             split=64))
        return out[:1] if dry_run else out
    for threads in (32, 64, 128, 256, 512, 1024):
        if threads > max(64, 2 * block) or (threads == 32 and block > 64):
            continue
        for chunk in sorted({min(threads, 128), threads}):
            if -(-bs // chunk) > 128:
                continue
            for scans in (1, 2):
                out.append(_numba_candidate("roles", threads=threads, chunk=chunk, scans=scans))
    return out[:1] if dry_run else out


def roles_lookback_candidates(framework: str, bs: int, dry_run: bool = False) -> list[Entry]:
    """The ``roles-lookback`` configs for ``bs``: scan tiles (Triton) or chunks (Numba) of
    128-1024 requests that give two scan programs or more, (Triton) scan programs of one or two
    warps over 32-256 lanes, and (Numba) ``warp-lookback`` chunks of 64-512, each with its
    polls one word at a time and joint (the planner's ``JOINT_REPOLL``), and chunks of 96 and
    192 with joint polls; ``dry_run``: one config of 32-lane scan tiles from bs 64 on (Numba:
    and one ``warp-lookback`` config)."""
    out: list[Entry] = []
    if dry_run:  # small tiles: two scan programs at the dry run's bs 64
        return ([_triton_candidate("roles-lookback", tile=32, scan_tile=32, num_warps=1)]
                if framework == "triton" else [_numba_candidate("roles-lookback", chunk=32),
                                               _numba_candidate("warp-lookback", chunk=32)]) \
            if bs >= 64 else []
    if framework == "triton":
        for scan_tile in (128, 256, 512):
            for tile in (32, 64, 128, 256):  # a seed program of TILE lanes and 32 * w threads
                for w in (4, 8, 16) if scan_tile == 512 else (4, 8):
                    if 2 * scan_tile <= max(bs, 64) and -(-bs // tile) <= 128:
                        out.append(_triton_candidate("roles-lookback", tile=tile,
                                                     scan_tile=scan_tile, num_warps=w))
                        if tile <= 128:  # one reduction and scan for both sides
                            for early in (False, True):  # the poll before or after the scan
                                out.append(_triton_candidate(
                                    "roles-lookback", tile=tile, scan_tile=scan_tile,
                                    num_warps=w, joined=True, early_poll=early))
        for scan_tile in (32, 64, 128, 256):  # scan programs of one or two warps: a tile's
            for tile in (32, 64):  # reduction and scan need no barrier between warps (1) or one
                for w in (1, 2):
                    if (2 * scan_tile <= max(bs, 64) and -(-bs // tile) <= 128
                            and -(-bs // scan_tile) <= 128):
                        for early in (False, True):
                            out.append(_triton_candidate(
                                "roles-lookback", tile=tile, scan_tile=scan_tile,
                                num_warps=w, joined=True, early_poll=early))
        return out
    for threads, chunk in ((128, 256), (256, 256), (256, 512), (512, 512), (512, 1024),
                           (1024, 1024)):
        for seed_tile in sorted({64, 128, threads}):  # seed blocks of fewer requests than threads
            if (2 * chunk <= max(bs, 64) and -(-bs // seed_tile) <= 128
                    and seed_tile <= threads and (seed_tile == threads or threads >= 256)):
                for fixed in (False, True):  # the chunk a runtime argument or a constant
                    out.append(_numba_candidate("roles-lookback", threads=threads, chunk=chunk,
                                                seed_tile=seed_tile, fixed_chunk=fixed))
    for chunk in (64, 128, 256, 512):  # blocks of one warp: no block-wide barrier
        if 2 * chunk <= max(bs, 64) and -(-bs // 32) <= 128:
            out.append(_numba_candidate("warp-lookback", chunk=chunk))
            out.append(_numba_candidate("warp-lookback", chunk=chunk, joint_repoll=True))
    for chunk in (96, 192):  # runs of 3 and 6 requests a lane
        if 2 * chunk <= max(bs, 64) and -(-bs // 32) <= 128:
            out.append(_numba_candidate("warp-lookback", chunk=chunk, joint_repoll=True))
    return out


def hazard_kwargs(bs: int, seed: int, device: torch.device) -> dict:
    """Launcher arguments with out-of-contract values (spec section 6): padding rows, rows < 0
    and >= max_reqs, prefixes past the row and negative, negative extends, negative table slots,
    a short LUT (slots clamp), a window around the prefixes; outputs poisoned at random, spare
    capacity. Drawn on the CPU with ``seed``, then moved to ``device``."""
    g = torch.Generator().manual_seed(seed * 7919 + bs)

    def ints(n, lo, hi):
        return torch.randint(lo, hi, (n,), generator=g, dtype=torch.int64)

    max_reqs, max_seq_len = 37, 300
    pick = torch.rand(bs, generator=g)
    rows = ints(bs, 1, max_reqs)
    rows[pick < 0.2] = 0
    rows[(pick >= 0.2) & (pick < 0.3)] = -3
    rows[(pick >= 0.3) & (pick < 0.4)] = max_reqs + 1
    prefix = ints(bs, -5, max_seq_len + 20)
    extend = ints(bs, -3, 9)
    table = torch.randint(-(1 << 20), 1 << 20, (max_reqs, max_seq_len), generator=g,
                          dtype=torch.int32)
    lut = ints(41, -(1 << 40), 1 << 40)
    total = int(torch.where(rows != 0, prefix.clamp(min=0, max=150), 0).sum())
    cap = bs + 3
    window, capacity = SCALAR_NAMES
    kw = dict(zip(INPUT_NAMES, (rows, prefix, extend, table, lut)))
    kw.update({window: 150, capacity: max(0, total - 2)})
    # spec section 3's output lengths: scratch >= PLAN_BS_BLOCK_SIZE + 1, write offsets cap + 1,
    # seed slots cap, three one-element scalars (contract order)
    lengths = (SCRATCH_MIN_LEN + 3, cap + 1, cap, 1, 1, 1)
    for name, n in zip(OUTPUT_NAMES, lengths):
        dtype = BY_NAME[name].dtype
        info = torch.iinfo(dtype)
        kw[name] = torch.randint(info.min, info.max, (n,), generator=g, dtype=dtype)
    return {k: v.to(device) if isinstance(v, torch.Tensor) else v for k, v in kw.items()}
