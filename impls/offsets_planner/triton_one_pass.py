"""Candidate one-pass Triton planners for the whole plan (spec sections 5 and 6), beside the
default planner (:mod:`impls.offsets_planner.triton_planner`), which they do not change: the
designs, the shape of a launch (:func:`config_for`) and the launchers (:func:`plan_launch`,
:func:`launcher`).

Each candidate is one launch whose only dependent round trips are the chain's: the three request
values, then the table entry, then the LUT entry (the kernel, its load order and its workspace:
:mod:`impls.offsets_planner.triton_one_pass_kernel`).

Designs (:data:`DESIGNS`), chosen with ``design=`` on :func:`plan_launch`:

* ``single``: one program owns every lane (``TILE`` = the smallest power of two >= bs, at least
  32), ``tl.cumsum`` over the tile, or with ``split > 0`` a two-level scan (rows of ``split``
  lanes scanned, then the row totals);
* ``blocked``: ``ceil(bs / tile)`` programs; each loads the request values (never the table) of
  every lane before its tile and sums their lengths, issued after its own table gather so that the
  reduction overlaps the table -> LUT chain;
* ``lookback``: ``ceil(bs / tile)`` programs that share a workspace
  (:func:`impls.offsets_planner.triton_one_pass_kernel.workspace`, zeroed once per device). A
  program takes its tile by ticket, publishes its tile's two length totals and a flag tagged with
  the launch's epoch, gathers its table entries, then waits for the flags of every tile before it
  and sums their totals. Valid under CUDA-graph replay with no reset kernel; a launch that is
  killed midway leaves the workspace invalid
  (:func:`impls.offsets_planner.triton_one_pass_kernel.reset_workspace`). One launch at a time
  per workspace (one stream), as a server's planning step is;
* ``lookback-pid``: the same, but the tile is the program id and the ticket (still taken, for the
  epoch) is issued after the inputs' loads, so it costs no dependent round trip before them. An
  earlier tile's program is then not known to have started: this relies on the whole grid being
  resident at once (at most 128 small programs; an H200 has 132 SMs), which CUDA does not promise
  when other work holds the SMs. The bounded spin
  (:data:`impls.offsets_planner.triton_one_pass_kernel.SPIN_LIMIT`) turns a violation into wrong
  outputs, not a hang.

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
from impls.offsets_planner.triton_one_pass_kernel import MAX_PROGRAMS, _one_pass_kernel, workspace
from impls.offsets_planner.validate_cache import lookup

MODE = tp.MODE
DESIGNS = ("single", "blocked", "lookback", "lookback-pid", "blocked-unrolled", "lookback-packed",
           "roles", "roles-lookback")


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
