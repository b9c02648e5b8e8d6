"""Candidate one-pass Numba CUDA planners (:mod:`impls.offsets_planner.numba_one_pass_kernel`), beside the default
(:mod:`impls.offsets_planner.numba_cuda_planner`), which they do not change.

Designs (:data:`DESIGNS`), chosen with ``design=`` on :func:`plan_launch`:

* ``single``: one block of ``threads`` threads owns every request, ``ceil(bs / threads)`` each;
* ``blocked``: ``ceil(bs / chunk)`` blocks, each summing the request values before its chunk
  itself, after its own table gathers;
* ``lookback``: ``ceil(bs / chunk)`` blocks that take their chunk by ticket and add the totals
  published by earlier chunks (the workspace of :func:`workspace`, zeroed once per device, kept
  valid by the kernel itself, also under CUDA-graph replay; one launch at a time per workspace, as
  on one stream; a launch killed midway leaves it invalid: :func:`reset_workspace`);
* ``lookback-pid``: the same with the chunk by block index, the ticket (for the epoch) taken after
  the table gathers: no round trip before the inputs, but it relies on every block being resident
  at once (:mod:`impls.offsets_planner.numba_one_pass_layout`);
* ``lookback-packed``: the chunk by block index, the epoch from a ticket issued beside the inputs,
  the block's scan before the LUT gathers, its two totals published as four self-flagged words
  (``READY | 32 bits``) into one of two sets (the other zeroed for the next launch), read back with
  one volatile load per word (:mod:`impls.offsets_planner.numba_one_pass_kernel`; the same scheme as
  :mod:`impls.offsets_planner.triton_packed_lookback`);
* ``roles``: ``ceil(bs / chunk)`` seed blocks that do only the gather chain (``chunk`` at most
  ``threads``, one request a thread), then ``scans`` (1 or 2) scan blocks that do only the scans;
  no block waits on another (:mod:`impls.offsets_planner.numba_roles_kernel`);
* ``roles-lookback``: ``ceil(bs / chunk)`` scan blocks that pass their totals on by a look-back
  with an exact fallback, then seed blocks of ``threads`` requests
  (:mod:`impls.offsets_planner.numba_roles_lookback_kernel`, its own workspace);
* ``warp-lookback``: the same look-back with blocks of one warp: ``ceil(bs / chunk)`` scan blocks
  (``chunk`` a multiple of 32, ``chunk / 32`` requests a lane), then seed blocks of 32 requests;
  no block-wide barrier (:mod:`impls.offsets_planner.numba_warp_lookback_kernel`, the
  ``roles-lookback`` workspace).

Launches go through Numba's ordinary launch on torch's current stream (GPU) or the simulator (CPU
tensors): device time, not launch cost, is what these candidates are for. Mode: that of
:mod:`impls.offsets_planner.numba_cuda_planner` (imported first). Semantics: spec sections 5 and 6, byte for byte
those of :mod:`impls.offsets_planner.python_planner`.
"""

from __future__ import annotations

import torch

from impls.offsets_planner import numba_cuda_planner as nb  # first: decides NUMBA_ENABLE_CUDASIM
from impls.offsets_planner.constants import NO_SEED, REQ_POOL_IDX_PADDING
from impls.offsets_planner.contract import REQUEST_INPUT_NAMES
from impls.offsets_planner.validate_cache import lookup

DESIGNS = ("single", "blocked", "lookback", "lookback-pid", "lookback-packed", "roles",
           "roles-lookback", "warp-lookback")
SIMULATED = nb.SIMULATED
SIM_THREADS = 32
"""Threads per block in the simulator (each one a Python thread there)."""

_KERNELS: dict[tuple, object] = {}
_WORKSPACES: dict[str, torch.Tensor] = {}


FLAT_DESIGNS = ("roles", "roles-lookback", "warp-lookback")
"""The designs whose kernels take the planner's parameters (a flat table and its shape:
:data:`impls.offsets_planner.numba_cuda_kernel.ARRAY_SIGNATURE`, or with ``pointers``
:data:`~impls.offsets_planner.numba_cuda_kernel.POINTER_SIGNATURE`); the others take
:data:`impls.offsets_planner.numba_one_pass_layout.SIGNATURE`."""


def kernel(design: str, items: int, threads: int, scans: int = 1, slow_carry: bool = False,
           per_lane: int = 0, seed_tile: int = 0, fixed_chunk: int = 0,
           count_spins: bool = False, poll_delay_ns: int = 0, pointers: bool = False,
           early_publish: bool = False, joint_repoll: bool = False, epoch_load: bool = False,
           pre_poll: bool = False):
    """The compiled kernel for ``design`` with ``items`` requests a thread at most and blocks of
    at most ``threads`` threads (``roles``: ``scans`` scan blocks; ``roles-lookback``: ``per_lane``
    earlier-block words a polling lane reads, 0 for the kernel's default, ``seed_tile`` requests
    a seed block, 0 for ``threads``, and ``fixed_chunk`` its chunk as a compile-time constant, 0
    for the launch's argument); compiled once per key, eagerly on the GPU for its signature
    (:data:`FLAT_DESIGNS`; ``pointers``: raw-pointer parameters). ``count_spins``: the look-back
    designs' re-polls and fallbacks counted in workspace words 1 and 2 (diagnostics);
    ``poll_delay_ns``: ``roles-lookback`` only, a sleep between publishing and the first poll;
    ``early_publish``, ``joint_repoll``, ``epoch_load``, ``pre_poll``: ``warp-lookback`` only
    (:func:`impls.offsets_planner.numba_warp_lookback_kernel.build_warp_lookback_kernel`).
    """
    from numba import cuda

    from impls.offsets_planner.numba_cuda_kernel import ARRAY_SIGNATURE, POINTER_SIGNATURE
    from impls.offsets_planner.numba_one_pass_kernel import build_kernel
    from impls.offsets_planner.numba_one_pass_layout import SIGNATURE
    from impls.offsets_planner.numba_roles_kernel import build_roles_kernel
    from impls.offsets_planner.numba_roles_lookback_kernel import build_roles_lookback_kernel

    key = (design, items, threads, scans, slow_carry, per_lane, seed_tile, fixed_chunk,
           count_spins, poll_delay_ns, pointers, early_publish, joint_repoll, epoch_load, pre_poll)
    k = _KERNELS.get(key)
    if k is None:
        if design == "warp-lookback":
            from impls.offsets_planner.numba_warp_lookback_kernel import (
                build_warp_lookback_kernel)

            fn = build_warp_lookback_kernel(use_shuffle=not SIMULATED,
                                            padding=REQ_POOL_IDX_PADDING, no_seed=NO_SEED,
                                            items=items, poll=nb._poll(), per_lane=per_lane,
                                            slow_carry=slow_carry, count_spins=count_spins,
                                            early_publish=early_publish,
                                            joint_repoll=joint_repoll,
                                            epoch_load=epoch_load, pre_poll=pre_poll)
        elif design == "roles-lookback":
            fn = build_roles_lookback_kernel(use_shuffle=not SIMULATED,
                                             padding=REQ_POOL_IDX_PADDING, no_seed=NO_SEED,
                                             max_threads=threads, items=items, poll=nb._poll(),
                                             slow_carry=slow_carry, seed_tile=seed_tile,
                                             fixed_chunk=fixed_chunk, count_spins=count_spins,
                                             poll_delay_ns=0 if SIMULATED else poll_delay_ns,
                                             **({"per_lane": per_lane} if per_lane else {}))
        elif design == "roles":
            fn = build_roles_kernel(use_shuffle=not SIMULATED, padding=REQ_POOL_IDX_PADDING,
                                    no_seed=NO_SEED, max_threads=threads, items=items,
                                    scans=scans)
        else:
            fn = build_kernel(design=design, use_shuffle=not SIMULATED,
                              padding=REQ_POOL_IDX_PADDING, no_seed=NO_SEED, max_threads=threads,
                              items=items, poll=nb._poll())
        signature = SIGNATURE if design not in FLAT_DESIGNS else (
            POINTER_SIGNATURE if pointers else ARRAY_SIGNATURE)
        k = _KERNELS[key] = cuda.jit(fn) if SIMULATED else cuda.jit(signature)(fn)
    return k


def workspace(device: torch.device, design: str = "lookback") -> torch.Tensor:
    """``device``'s look-back workspace, int64 [WORKSPACE_LEN], zeroed when first made (make it
    before any graph capture); ``roles-lookback``: the one the default planner shares
    (:func:`impls.offsets_planner.numba_roles_lookback_kernel.workspace`)."""
    from impls.offsets_planner import numba_one_pass_layout, numba_roles_lookback_kernel

    if design in ("roles-lookback", "warp-lookback"):
        return numba_roles_lookback_kernel.workspace(device)
    key = str(device)
    ws = _WORKSPACES.get(key)
    if ws is None:
        ws = _WORKSPACES[key] = torch.zeros(numba_one_pass_layout.WORKSPACE_LEN,
                                            dtype=torch.int64, device=device)
    return ws


def reset_workspace(device: torch.device, design: str = "lookback") -> None:
    """Zero ``device``'s workspace again (after a launch that did not finish)."""
    workspace(device, design).zero_()


def launch_shape(design: str, bs: int, threads: int | None, chunk: int | None,
                 scans: int = 1, seed_tile: int | None = None) -> tuple[int, int, int, int]:
    """``(blocks, threads, chunk, items)`` of one launch: at least one block (numba#4140);
    ``roles``: the seed blocks and then ``scans`` scan blocks, ``items`` a scan thread's requests;
    ``roles-lookback``: the scan blocks, then seed blocks of ``seed_tile`` requests (default
    ``threads``; at most ``threads``); ``warp-lookback``: 32 threads, the scan blocks of ``chunk``
    requests (default 256), then seed blocks of 32, ``items`` ``chunk / 32``.

    Raises:
        ValueError: an unknown design; threads not a multiple of 32 in [32, 1024]; more than 128
            blocks (the workspace's tiles) or seed blocks (``roles-lookback``: scan blocks, and a
            seed tile above threads); ``roles`` with a chunk above threads or ``scans`` not 1
            or 2.
    """
    if design not in DESIGNS:
        raise ValueError(f"unknown design {design!r}: use one of {', '.join(DESIGNS)}")
    if design == "warp-lookback":
        chunk = chunk or 256
        if chunk % 32 or not 32 <= chunk <= 4096:
            raise ValueError(f"warp-lookback: chunk={chunk} must be a multiple of 32 in [32, 4096]")
        scanners = max(1, -(-bs // chunk))
        if scanners > 128:
            raise ValueError(f"{scanners} scan blocks exceed the workspace's 128")
        return scanners + -(-bs // 32), 32, chunk, chunk // 32
    if SIMULATED:
        threads = SIM_THREADS
    threads = threads or (1024 if design == "single" else 256)
    if threads % 32 or not 32 <= threads <= 1024:
        raise ValueError(f"threads={threads} must be a multiple of 32 in [32, 1024]")
    if design == "roles-lookback":
        chunk = chunk or 512
        seed_tile = seed_tile or threads
        if seed_tile > threads:
            raise ValueError(f"seed_tile={seed_tile} must be at most threads={threads}")
        scanners, seeders = max(1, -(-bs // chunk)), -(-bs // seed_tile)
        if scanners > 128:  # the workspace's tiles; seed blocks use none
            raise ValueError(f"{scanners} scan blocks exceed the workspace's 128")
        items = max(1, -(-chunk // threads))
        return scanners + seeders, threads, chunk, 1 << (items - 1).bit_length()
    if design == "roles":
        chunk = min(chunk or threads, threads) if SIMULATED else chunk or threads
        if chunk > threads or scans not in (1, 2):
            raise ValueError(f"roles: chunk={chunk} must be at most threads={threads} and "
                             f"scans={scans} 1 or 2")
        seeders = -(-bs // chunk)
        if seeders > 128:
            raise ValueError(f"{seeders} seed blocks exceed 128")
        items = max(1, -(-bs // threads))
        return seeders + scans, threads, chunk, 1 << (items - 1).bit_length()
    if design == "single":
        chunk = max(bs, 1)
    chunk = chunk or (nb.SIM_CHUNK if SIMULATED else threads)
    blocks = max(1, -(-bs // chunk))
    if blocks > 128:
        raise ValueError(f"{blocks} blocks exceed the workspace's 128 tiles")
    items = max(1, -(-chunk // threads))
    items = 1 << (items - 1).bit_length()  # a few compiled variants, not one per bs
    return blocks, threads, chunk, items


def plan_launch(*, design: str, threads: int | None = None, chunk: int | None = None,
                scans: int = 1, slow_carry: bool = False, seed_tile: int | None = None,
                fixed_chunk: bool = False, count_spins: bool = False,
                poll_delay_ns: int = 0, pointers: bool = True, early_publish: bool = False,
                joint_repoll: bool = False, epoch_load: bool = False, pre_poll: bool = False,
                **launcher_kwargs) -> None:
    """Plan with candidate ``design``; the launcher of spec section 3 otherwise.

    Args:
        design: one of :data:`DESIGNS` (module docstring).
        threads: threads per block (GPU; the simulator always takes :data:`SIM_THREADS`); default
            1024 for ``single``, 256 otherwise.
        chunk: requests per block (``single``: all of them); default ``threads`` on the GPU,
            :data:`impls.offsets_planner.numba_cuda_planner.SIM_CHUNK` in the simulator (its threads are Python
            threads: many small blocks that each re-read the requests before them are slow).
        scans: ``roles`` only: 1 scan block for both sides, or 2 (verify, write).
        slow_carry: ``roles-lookback`` only: every scan block takes the fallback path (tests).
        seed_tile: ``roles-lookback`` only: requests a seed block (default ``threads``); its
            polling lanes read as many words as this launch's scan blocks need.
        fixed_chunk: ``roles-lookback`` only: the chunk and threads compiled in as constants.
        count_spins: the look-back designs: re-polls and fallbacks counted in workspace words 1
            and 2 (diagnostics).
        poll_delay_ns: ``roles-lookback`` only: warp 0's sleep between publishing and its first
            poll (GPU; ignored in the simulator).
        pointers: :data:`FLAT_DESIGNS` only: raw-pointer kernel parameters, as the default
            planner launches them (GPU; the simulator takes arrays); False: Numba arrays.
        early_publish, joint_repoll, epoch_load, pre_poll: ``warp-lookback`` only:
            :func:`kernel`.
        launcher_kwargs: the 13 keyword arguments of spec section 3.

    Raises:
        PlanError: (a ``ValueError``) any check of spec section 4, before anything is launched.
        ValueError: a shape :func:`launch_shape` refuses.
        TypeError: tensors on a device type this mode does not run on.
    """
    from numba import cuda

    plan, buffers = lookup(launcher_kwargs)
    blocks, threads, chunk, items = launch_shape(design, plan.bs, threads, chunk, scans, seed_tile)
    per_lane = tile = 0
    if design in ("roles-lookback", "warp-lookback"):  # the words this launch's blocks need
        per_lane = -(-4 * max(1, -(-plan.bs // chunk)) // 32)
        tile = seed_tile or threads
    flat = design in FLAT_DESIGNS
    pointers = pointers and flat and not SIMULATED
    k = kernel(design, items, threads, scans, slow_carry, per_lane, tile,
               chunk if fixed_chunk else 0, count_spins, poll_delay_ns, pointers, early_publish,
               joint_repoll, epoch_load, pre_poll)
    window, capacity = nb._int64_scalars(plan)
    ws = workspace(buffers.device, design)
    table = buffers.tensors[0]
    tensors = (*(launcher_kwargs[n] for n in REQUEST_INPUT_NAMES),
               table.reshape(-1) if flat else table, *buffers.tensors[1:], ws)
    scalars = (plan.bs, plan.lut_len, window, capacity, chunk, *(table.shape if flat else ()))
    if SIMULATED:
        if buffers.device.type != "cpu":
            raise TypeError(f"numba one-pass planner in simulator mode takes CPU tensors, got "
                            f"{buffers.device}")
        arrays = [cuda.In(t.numpy()) for t in tensors[:5]] + [t.numpy() for t in tensors[5:]]
        k[blocks, threads](*arrays, *scalars)
        return
    if buffers.device.type != "cuda":
        raise TypeError(f"numba one-pass planner in gpu mode takes CUDA tensors, got "
                        f"{buffers.device}")
    with torch.cuda.device(buffers.device):
        stream = cuda.external_stream(torch.cuda.current_stream().cuda_stream)
        views = ([t.data_ptr() for t in tensors[:11]] + [cuda.as_cuda_array(ws, sync=False)]
                 if pointers else [cuda.as_cuda_array(t, sync=False) for t in tensors])
        k[blocks, threads, stream](*views, *scalars)


def launcher(design: str, **config):
    """A launcher of spec section 3's shape planning with ``design`` and ``config`` (for
    ``--planner module:attr`` corpus runs: :data:`launch_single` and its siblings)."""
    def launch(**launcher_kwargs) -> None:
        plan_launch(design=design, **config, **launcher_kwargs)
    launch.__doc__ = f"The launcher of spec section 3, planning with design {design!r} {config}."
    return launch


launch_single = launcher("single")
launch_blocked = launcher("blocked")
launch_lookback = launcher("lookback")
launch_lookback_pid = launcher("lookback-pid")
launch_warp_lookback = launcher("warp-lookback")
