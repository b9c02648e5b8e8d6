"""The Triton planner's prepared launches (:mod:`impls.offsets_planner.triton_planner`): a plan's
grid, integer arguments and compiled-kernel handles, built once per buffer set and bs, and the
one-time self-check of the fast launch that calls those handles.

A launch is prepared from the design tables (:mod:`impls.offsets_planner.triton_launch_design`)
and kept in :attr:`impls.offsets_planner.buffer_set.BufferSet.records`; the planner's launch
(``triton_planner._launch``) then takes Triton's standard path or, once the compiled kernel is
known and :func:`run_self_check` passed, the compiled kernel's own launcher.

The planner's mode and settings (``_GPU``, ``_MULTI_GPU``, ``_kernel``, ``_COMPILED``,
``_design_kernel``, :data:`~impls.offsets_planner.triton_planner.EARLY_POLL`,
:data:`~impls.offsets_planner.triton_planner.EPOCH_LOAD`) are read on the planner module at
call time, and :data:`~impls.offsets_planner.triton_planner.FAST_LAUNCH_CHECK` is set there, so that a
value set on the planner (a test, a sweep) takes effect here.
"""

from __future__ import annotations

from collections.abc import Callable

import torch

from impls.offsets_planner.buffer_set import BufferSet
from impls.offsets_planner.contract import REQUEST_INPUT_NAMES
from impls.offsets_planner.launch_self_check import probe_kwargs, self_check
from impls.offsets_planner.triton_launch_design import (CONFIG, DESIGNS, INTERPRETER_DESIGNS,
                                                        block_for)
from impls.offsets_planner.validate import LaunchPlan
from impls.offsets_planner.validate_cache import lookup


class Prepared:
    """One plan's launch, prepared once per buffer set and bs (kept in
    :attr:`impls.offsets_planner.buffer_set.BufferSet.records`).

    Attributes:
        tail: the kernel's integer and constexpr arguments after its pointers.
        grid: programs.
        key: the design's name, its constexprs and num_warps, after the device index: the
            compiled-kernel cache key.
        kernel, warps: the JIT kernel and its num_warps (a standard launch).
        provisional: True for a look-back design's stand-in prepared under capture (prepare
            again outside capture).
        device: the CUDA device index the launch goes to (0 on a one-GPU machine).
        run, function, metadata: the compiled kernel's launcher, its function handle and packed
            metadata (None until a standard launch compiled it): the fast launch calls
            ``run(grid, 1, 1, stream, function, metadata, None, None, None, *tensors, *tail)``.
        suffix: the buffer set's eight tensors (and a look-back design's workspace) and then
            ``tail``: everything after the three request tensors, built once.
    """

    __slots__ = ("tail", "grid", "key", "device", "suffix", "run", "function", "metadata",
                 "kernel", "warps", "provisional")

    def __init__(self, tail: tuple, grid: int, key: tuple, device: int, tensors: tuple,
                 kernel, warps: int) -> None:
        self.tail, self.grid, self.key, self.device = tail, grid, key, device
        self.kernel, self.warps, self.provisional = kernel, warps, False
        self.suffix = (*tensors, *tail)
        self.run = self.function = self.metadata = None
        compiled = tp._COMPILED.get(key)
        if compiled is not None:
            self.attach(compiled)

    def attach(self, compiled) -> None:
        """Take the compiled kernel's fast-launch handles (``run`` first: it loads the binary)."""
        self.run = compiled.run
        self.function, self.metadata = compiled.function, compiled.packed_metadata


def _design_kernel(design: str):
    """The JIT kernel of a :data:`impls.offsets_planner.triton_launch_design.DESIGNS` design
    (imported on first use: the design modules import the planner)."""
    if design == "roles":
        from impls.offsets_planner.triton_roles import _roles_kernel
        return _roles_kernel
    from impls.offsets_planner.triton_roles_lookback import _roles_lookback_kernel
    return _roles_lookback_kernel


def _prepare_design(plan: LaunchPlan, buffers: BufferSet) -> Prepared:
    """The :class:`Prepared` default launch (:data:`DESIGNS`). A look-back design needs the
    device's workspace, made and zeroed on first use; when that first use is under CUDA-graph
    capture (a zeroing there would run only at replay) the launch takes the ``roles`` design with
    two scan programs instead, and the record is marked provisional so that the next launch
    outside capture prepares again."""
    from impls.offsets_planner import triton_roles, triton_roles_lookback

    block = block_for(plan.bs)
    design = (DESIGNS if tp._GPU else INTERPRETER_DESIGNS)[block]
    window = 0 if plan.swa_window_size <= 0 else min(plan.swa_window_size, tp._INT64_MAX)
    ints = (plan.bs, plan.req_to_token_stride0, plan.max_reqs, plan.max_seq_len, plan.lut_len,
            window, min(plan.verify_capacity, tp._INT64_MAX))
    device = buffers.device.index if tp._MULTI_GPU else 0
    provisional = False
    if design[0] == "roles-lookback":
        ws = triton_roles_lookback.existing_workspace(buffers.device) if tp._GPU else None
        if ws is None and tp._GPU and torch.cuda.is_current_stream_capturing():
            design, provisional = ("roles", design[1], 16, 2), True
        else:
            ws = triton_roles_lookback.workspace(buffers.device)
    if design[0] == "roles":
        _name, tile, warps, scans = design
        block, tile, warps, grid = triton_roles.shape(plan.bs, tile, warps, 0, scans)
        tensors, tail = buffers.tensors, (*ints, block, tile, plan.has_swa_lut, scans, 0)
        key = (device, "roles", block, tile, plan.has_swa_lut, scans, warps)
    else:
        _name, tile, scan_tile, warps = design
        block, scan_tile, tile, warps, grid = triton_roles_lookback.shape(plan.bs, tile,
                                                                          scan_tile, warps)
        tensors = (*buffers.tensors, ws)
        flags = (tp.EARLY_POLL, tp.EPOCH_LOAD)
        tail = (*ints, block, scan_tile, tile, plan.has_swa_lut, max(2, block // scan_tile),
                False, True, *flags)  # SLOW_CARRY off; JOINED: one reduction
        key = (device, "roles-lookback", block, scan_tile, tile, plan.has_swa_lut, warps, *flags)
    prep = Prepared(tail, grid, key, device, tensors, tp._design_kernel(design[0]), warps)
    prep.provisional = provisional
    return prep


def _prepare(plan: LaunchPlan, buffers: BufferSet, num_warps: int | None, block: int | None,
             tile: int | None) -> Prepared:
    """The :class:`Prepared` launch of one plan on one buffer set: :data:`DESIGNS` when no
    configuration is given, else :data:`CONFIG`'s kernel with it."""
    if num_warps is None and block is None and tile is None:
        return _prepare_design(plan, buffers)
    block = max(block_for(plan.bs) if block is None else block, tile or 0)
    default_tile, default_warps = CONFIG.get(block, (min(block, 512), 16 if block >= 512 else 4))
    tile = default_tile if tile is None else tile
    warps = default_warps if num_warps is None else num_warps
    window = 0 if plan.swa_window_size <= 0 else min(plan.swa_window_size, tp._INT64_MAX)
    tail = (plan.bs, plan.req_to_token_stride0, plan.max_reqs, plan.max_seq_len, plan.lut_len,
            window, min(plan.verify_capacity, tp._INT64_MAX), block, tile, plan.has_swa_lut)
    device = buffers.device.index if tp._MULTI_GPU else 0
    key = (device, "config", block, tile, plan.has_swa_lut, warps)
    return Prepared(tail, max(1, -(-plan.bs // tile)), key, device, buffers.tensors, tp._kernel,
                    warps)


def _with_path(fast: bool) -> Callable[..., None]:
    """The planner forced onto the fast (compiled kernel's own launcher) or the standard launch."""
    def go(**kw) -> None:
        plan, buffers = lookup(kw)
        tp._launch(plan, buffers, *(kw[n] for n in REQUEST_INPUT_NAMES), fast=fast)
        if tp._GPU:
            torch.cuda.synchronize()
    return go


def run_self_check(device: torch.device | str | None = None,
                   fast: Callable[..., None] | None = None) -> bool:
    """Run the fast launch's self-check now and set
    :data:`impls.offsets_planner.triton_planner.FAST_LAUNCH_CHECK` (once per process on the GPU,
    from :func:`impls.offsets_planner.triton_planner.probe`). ``fast`` replaces the fast launch
    (tests: a failing one shows the fallback); ``device`` defaults to the current CUDA device, else
    the CPU."""
    if device is None:
        device = torch.device("cuda", torch.cuda.current_device()) if tp._GPU else "cpu"
    tp.FAST_LAUNCH_CHECK = False  # until it passes
    kw = probe_kwargs(device)
    standard = _with_path(False)
    standard(**kw)  # compile, so that the fast path has a kernel to launch
    tp.FAST_LAUNCH_CHECK = self_check(standard, fast or _with_path(True), kw)
    return tp.FAST_LAUNCH_CHECK


from impls.offsets_planner import triton_planner as tp  # noqa: E402 (last: it imports this module)
