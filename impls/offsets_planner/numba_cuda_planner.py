"""The Numba CUDA planner: the shared validator, then one ``numba.cuda.jit`` kernel launch.

Semantics are spec sections 5 and 6 ("this project" column), byte for byte those of the
pure-Python planner (:mod:`impls.offsets_planner.python_planner`).

**Mode** (:data:`MODE`), fixed when this module is first imported. Numba reads
``NUMBA_ENABLE_CUDASIM`` once, when ``numba.cuda`` is first imported (this module imports it):

* ``gpu``: the variable is unset or ``0`` and torch sees a CUDA device. The kernel is compiled for
  it and takes CUDA tensors; it runs on torch's current stream, so it orders with torch work and
  can be captured in a torch CUDA graph.
* ``simulator``: the variable is ``1``, or it is unset, torch sees no CUDA device and nothing has
  imported ``numba.cuda`` yet, in which case this module sets it to ``1`` before importing it. The
  same kernel source then runs in Numba's CUDA simulator on CPU tensors.

To force the simulator on a CUDA machine, export ``NUMBA_ENABLE_CUDASIM=1`` before anything imports
``numba.cuda``; export ``NUMBA_ENABLE_CUDASIM=0`` to forbid it (no GPU: unavailable). :func:`probe`
(:mod:`impls.offsets_planner.numba_cuda_probe`) says why the planner is unavailable (numba-cuda
missing, no device, or a kernel that cannot compile, such as numba 0.68.0 with numpy 2.5:
docs/numba-numpy.md).

**Kernel**: :data:`DESIGNS` (GPU) or :data:`SIM_DESIGNS` (simulator) picks one by bs, and
:func:`launch_shape` (:mod:`impls.offsets_planner.numba_launch_shape`) gives its grid. Up to bs
1024, ``roles`` (:mod:`impls.offsets_planner.numba_roles_kernel`): seed blocks that do only the
chain of dependent loads a seed needs (request values, table entry, LUT entry) beside two scan
blocks (verify side, write side) that do only the scans, totals and scalars; no block waits on
another. Above, on the GPU, ``warp-lookback``
(:mod:`impls.offsets_planner.numba_warp_lookback_kernel`): blocks of one warp, scan blocks of one
chunk each that pass their totals on by a decoupled look-back through a per-device workspace (made
at :func:`probe`, kept valid by the kernel; an exact fallback when an earlier block never shows),
then seed blocks of 32 requests; a table row may also name ``roles-lookback``
(:mod:`impls.offsets_planner.numba_roles_lookback_kernel`, the same look-back with blocks of
several warps). A launch whose device has no workspace yet while a CUDA graph is being captured (a
zeroing there would only run at replay) takes :data:`FALLBACK_DESIGN` (``blocked``,
:mod:`impls.offsets_planner.numba_cuda_kernel`: blocks that each plan one chunk and sum the lengths
before it themselves) and is prepared again on the next call outside capture. The simulator runs
``blocked`` above 1024. Block-wide scans use warp shuffles on the GPU and shared memory in the
simulator, which has no shuffles. bs = 0 still launches blocks (zero-block launches fail:
numba#4140, #5017). Constants reach the kernels as closure values, frozen alike in both modes
(numba#3265). Every kernel takes :data:`impls.offsets_planner.numba_cuda_kernel.POINTER_SIGNATURE`
on the GPU (raw pointers, the table flat with its shape as two scalars: a chain of loads up to 0.2
us faster than through Numba's array parameters) and 1-D arrays in the simulator.

**Launch path** on the GPU: one ``cuLaunchKernel`` with the parameters packed once per buffer set
(:mod:`impls.offsets_planner.numba_packed_launch`, checked at :func:`probe` against Numba's own
marshalling; Numba's ordinary launch when they differ).
"""

from __future__ import annotations

import torch

from impls.kernel_modes import choose_numba_simulator
from impls.offsets_planner.constants import NO_SEED, REQ_POOL_IDX_PADDING
from impls.offsets_planner.validate_cache import lookup, lookup_args
from impls.offsets_planner.validate import zero_lut

choose_numba_simulator()  # before numba.cuda is imported below

try:
    from numba import cuda
    from numba.cuda.core import config as _cuda_config

    from impls.offsets_planner import numba_roles_lookback_kernel as lookback_kernel
    from impls.offsets_planner.numba_cuda_kernel import POINTER_SIGNATURE, build_kernel
    from impls.offsets_planner.numba_roles_kernel import build_roles_kernel
    from impls.offsets_planner.numba_warp_lookback_kernel import build_warp_lookback_kernel

    _IMPORT_ERROR: str | None = None
    SIMULATED: bool = bool(_cuda_config.ENABLE_CUDASIM)
except Exception as exc:  # noqa: BLE001 - any import failure makes the planner unavailable
    cuda, SIMULATED, lookback_kernel = None, False, None
    _IMPORT_ERROR = f"numba-cuda is not importable: {type(exc).__name__}: {exc}"

MODE: str = "simulator" if SIMULATED else ("gpu" if cuda is not None else "unavailable")
"""``simulator`` (CPU tensors, Numba's CUDA simulator), ``gpu`` (CUDA tensors, compiled), or
``unavailable`` when numba-cuda cannot be imported (:func:`probe` says why)."""

SIM_THREADS, SIM_CHUNK = 32, 1024
"""Simulator blocks: 32 threads (each a Python thread there), 1024 requests a block, so that
bs > 1024 still runs several blocks."""

GPU_THREADS = 512
"""GPU ``blocked`` blocks: up to 512 threads, one request a thread (bs = 4096 is 8 blocks)."""

DESIGNS: tuple[tuple[int, tuple[str, int, int, int]], ...] = (
    (64, ("roles", 64, 64, 2)), (1024, ("roles", 512, 512, 2)),
    (4096, ("warp-lookback", 32, 128, 0)))
"""GPU: ``(largest bs, (design, threads, chunk, fourth))``, the first that holds bs. ``roles``:
``ceil(bs / chunk)`` seed blocks then ``fourth`` scan blocks, all of ``threads`` threads;
``roles-lookback``: ``ceil(bs / chunk)`` scan blocks then seed blocks of ``fourth`` requests (0:
``threads``); ``warp-lookback``: ``ceil(bs / chunk)`` one-warp scan blocks then one-warp seed
blocks (``threads`` 32, ``fourth`` unused); ``blocked``: chunks of ``threads`` requests (fewer
for a smaller bs, rounded up to 32). The fastest correct configs of the H200 sweeps
(``reports/gpu/2026-12-03-d/one_pass/`` to ``reports/gpu/2026-12-04-c/``, raw pointers from
``2026-12-04-b``): ``roles`` 2.97 / 3.13 us at bs 512 / 1024 (``blocked`` 3.90 / 4.71 with
arrays); at bs 4096 ``warp-lookback`` with 128-request chunks 3.40-3.46 us against 3.58-3.74 for
``roles-lookback`` (256-request chunks), 3.72 for ``warp-lookback`` at 256 and 4.41 at 64."""

SIM_DESIGNS: tuple[tuple[int, tuple[str, int, int, int]], ...] = (
    (1024, ("roles", SIM_THREADS, SIM_CHUNK, 1)), (4096, ("blocked", SIM_THREADS, SIM_CHUNK, 0)))
"""The same designs in the simulator, with its fewest blocks (each thread a Python thread): one
seed block of up to 1024 requests and one scan block for both sides (two scan blocks made the
corpus's simulator run 1.6x slower; tests/test_numba_cuda_planner.py runs both in the
simulator, the GPU's corpus runs its own table)."""

JOINT_REPOLL = True
"""``warp-lookback``'s poll order (:func:`impls.offsets_planner.numba_warp_lookback_kernel.
build_warp_lookback_kernel`): every earlier block's word not ready yet is polled again in one
round, all in flight at once, rather than one word at a time. H200, bs 4096, 128-request chunks
(``reports/gpu/2026-12-05/repoll.txt``, one graph each replayed in turn): 3.68 us against 3.90
for the one-at-a-time order; publishing the totals before the warp's scan (``early_publish``) was
3.80 with joint re-polls and 4.34 without, so it stays off."""

EPOCH_LOAD = False
"""``warp-lookback``'s epoch: False, from the result of the ticket's atomic, drawn beside the
run's loads; True, from a volatile load of word 0 there, the ticket drawn after the block's
outputs (:func:`impls.offsets_planner.numba_warp_lookback_kernel.build_warp_lookback_kernel`)."""

PRE_POLL = False
"""``warp-lookback``'s first polls: False, sent after the block's own publish; True, sent as soon
as the ticket is known, before the warp's scan
(:func:`impls.offsets_planner.numba_warp_lookback_kernel.build_warp_lookback_kernel`). Off: on an
H100 (one sweep, 2026-12-05, ``reports/gpu/2026-12-05-d/``) 3.98 against 3.77 us at bs 4096."""

_ITEMS = SIM_CHUNK // SIM_THREADS if SIMULATED else 1
"""Most requests one ``blocked`` thread plans (1 on the GPU, 32 in the simulator)."""

_KERNELS: dict[tuple, object] = {}


def compiled(key: tuple = ("blocked",), use_shuffle: bool = True):
    """The jitted kernel of ``key`` (:func:`launch_shape`'s fourth value: ``("blocked",)``,
    ``("roles", items, scans, threads)``,
    ``("roles-lookback", items, threads, per_lane, seed_tile, chunk)`` or
    ``("warp-lookback", items, per_lane)``) for
    one scan variant, built once (compiled eagerly on the GPU; the simulator always takes the
    shared-memory scan)."""
    use_shuffle = use_shuffle and not SIMULATED
    kernel = _KERNELS.get((key, use_shuffle))
    if kernel is None:
        if key[0] == "warp-lookback":
            _name, items, per_lane = key
            fn = build_warp_lookback_kernel(use_shuffle=use_shuffle, padding=REQ_POOL_IDX_PADDING,
                                            no_seed=NO_SEED, items=items, poll=_poll(),
                                            per_lane=per_lane, joint_repoll=JOINT_REPOLL,
                                            epoch_load=EPOCH_LOAD, pre_poll=PRE_POLL)
        elif key[0] == "roles-lookback":
            _name, items, threads, per_lane, seed_tile, chunk = key
            fn = lookback_kernel.build_roles_lookback_kernel(
                use_shuffle=use_shuffle, padding=REQ_POOL_IDX_PADDING, no_seed=NO_SEED,
                max_threads=threads, items=items, poll=_poll(), per_lane=per_lane,
                seed_tile=seed_tile, fixed_chunk=chunk)
        elif key[0] == "roles":
            _name, items, scans, threads = key
            fn = build_roles_kernel(use_shuffle=use_shuffle, padding=REQ_POOL_IDX_PADDING,
                                    no_seed=NO_SEED, max_threads=threads, items=items,
                                    scans=scans)
        else:
            fn = build_kernel(use_shuffle=use_shuffle, padding=REQ_POOL_IDX_PADDING,
                              no_seed=NO_SEED, items=_ITEMS,
                              max_threads=SIM_THREADS if SIMULATED else GPU_THREADS)
        kernel = cuda.jit(fn) if SIMULATED else cuda.jit(POINTER_SIGNATURE)(fn)
        _KERNELS[(key, use_shuffle)] = kernel
    return kernel


def _poll():
    """A look-back poll of one workspace word: a volatile load on the GPU, a plain read in the
    simulator (its threads read the array itself)."""
    if SIMULATED:
        return _plain_read
    from impls.offsets_planner.numba_volatile import load_volatile

    return load_volatile


def _plain_read(array, i):
    return array[i]


LOOKBACK_DESIGNS = ("roles-lookback", "warp-lookback")
"""The designs that read and keep the per-device look-back workspace."""

FALLBACK_DESIGN = ("blocked", GPU_THREADS, 0, 0)
"""What a look-back row (:data:`LOOKBACK_DESIGNS`) launches when its workspace cannot be made (its
first launch on a device is inside a CUDA-graph capture, where a zeroing would run only at
replay)."""


_INT64_MAX = (1 << 63) - 1


def _int64_scalars(plan) -> tuple[int, int]:
    """(window, capacity) as the kernel's int64 takes them: W <= 0 is 0, values past int64 clamp to
    its maximum, which gives the same outputs (min(prefix, W) and total <= capacity hold as for the
    exact values), where a plain int64 conversion would wrap or raise."""
    window = 0 if plan.swa_window_size <= 0 else min(plan.swa_window_size, _INT64_MAX)
    return window, min(plan.verify_capacity, _INT64_MAX)


def _launch_sim(plan, buffers, tensors: tuple) -> None:
    if buffers.device.type != "cpu":
        raise TypeError(f"numba-cuda planner in simulator mode takes CPU tensors, got "
                        f"{buffers.device}")
    table, lut = buffers.tensors[:2]
    inputs = [cuda.In(t.numpy()) for t in (*tensors, table.reshape(-1), lut)]
    outputs = [t.numpy() for t in buffers.tensors[2:]]
    blocks, threads, chunk, key = launch_shape(plan.bs)
    ws = (lookback_kernel.workspace(buffers.device).numpy() if key[0] in LOOKBACK_DESIGNS
          else cuda.In(zero_lut(buffers.device).numpy()))
    compiled(key)[blocks, threads](*inputs, *outputs, ws, plan.bs, plan.lut_len,
                                   *_int64_scalars(plan), chunk, *table.shape)


def validate_arguments(launcher_kwargs: dict):
    """The validate-only entry: what :func:`launch` checks before it launches.

    Args:
        launcher_kwargs: the 13 arguments of spec section 3, as a dict.

    Returns:
        (plan, buffer set) for :func:`launch_validated` (:func:`impls.offsets_planner.validate_cache.lookup`).

    Raises:
        PlanError: (a ``ValueError``) the first failing check of spec section 4.
    """
    return lookup(launcher_kwargs)


def launch_validated(validated, req_pool_indices: torch.Tensor, prefix_lens: torch.Tensor,
                     extend_seq_lens: torch.Tensor) -> None:
    """The launch alone, after :func:`validate_arguments` (or
    :meth:`impls.offsets_planner.buffer_set.BufferSet.plan_for`) passed for exactly these request tensors.

    Raises:
        TypeError: tensors on a device type this mode does not run on.
    """
    plan, buffers = validated
    tensors = (req_pool_indices, prefix_lens, extend_seq_lens)
    if SIMULATED:
        _launch_sim(plan, buffers, tensors)
    elif buffers.device.type != "cuda":
        raise TypeError(f"numba-cuda planner in gpu mode takes CUDA tensors, got {buffers.device}")
    else:
        packed_launch.launch_gpu(plan, buffers, tensors)


def launch(
    *,
    req_pool_indices: torch.Tensor,
    prefix_lens: torch.Tensor,
    extend_seq_lens: torch.Tensor,
    req_to_token: torch.Tensor,
    full_to_swa_index_mapping: torch.Tensor | None,
    out_verify_offsets_scratch: torch.Tensor,
    out_write_offsets: torch.Tensor,
    out_write_seed_slot_indices: torch.Tensor,
    out_verify_num_valid: torch.Tensor,
    out_verify_enable: torch.Tensor,
    out_write_num_valid_reqs: torch.Tensor,
    swa_window_size: int,
    verify_capacity: int,
) -> None:
    """Plan offsets with one Numba CUDA kernel; the launcher of spec section 3.

    Tensors as in spec section 3: int64 [bs] inputs, int32 [max_reqs, max_seq_len] table, int64
    [lut_len] LUT or None, outputs int64 [>= 4097], int64 [cap + 1], int64 [cap], int32 [1] x 3;
    CUDA tensors in ``gpu`` mode, CPU tensors in ``simulator`` mode. Writes
    ``out_verify_offsets_scratch[:bs+1]``, ``out_write_offsets[:bs+1]``,
    ``out_write_seed_slot_indices[:bs]`` and the three scalars, nothing else (spec section 5). On
    the GPU it is asynchronous, on torch's current stream, with no host work that depends on tensor
    values, so it can be captured in a CUDA graph.

    Raises:
        PlanError: (a ``ValueError``) the first failing check of spec section 4, before any launch.
        TypeError: tensors on a device type this mode does not run on.
    """
    # positional, in the signature's (impls.offsets_planner.contract.ARGUMENT_NAMES) order: no dict per call
    launch_validated(lookup_args(req_pool_indices, prefix_lens, extend_seq_lens, req_to_token,
                                 full_to_swa_index_mapping, out_verify_offsets_scratch,
                                 out_write_offsets, out_write_seed_slot_indices,
                                 out_verify_num_valid, out_verify_enable,
                                 out_write_num_valid_reqs, swa_window_size, verify_capacity),
                     req_pool_indices, prefix_lens, extend_seq_lens)


from impls.offsets_planner import numba_packed_launch as packed_launch  # noqa: E402 (uses this module)
from impls.offsets_planner.numba_cuda_probe import explain_failure, probe  # noqa: E402,F401 (same)
from impls.offsets_planner.numba_launch_shape import (  # noqa: E402,F401 (the planner's names)
    _largest, design_for, kernel_keys, launch_shape)
