"""The Triton planner: the shared validator, then one Triton launch.

Semantics are spec sections 5 and 6 ("this project" column), matched byte for byte against the
pure-Python planner (:mod:`impls.offsets_planner.python_planner`).

Mode, fixed when this module is imported (the kernel is decorated at import):

* ``gpu``: torch sees a CUDA device and ``TRITON_INTERPRET`` is unset or false. The kernel is
  compiled for that device; tensors must be CUDA tensors.
* ``interpreter``: ``TRITON_INTERPRET`` is true, or torch sees no CUDA device. Triton's
  interpreter runs the same kernel with numpy on CPU tensors. Without CUDA this module sets
  ``TRITON_INTERPRET=1`` itself (when unset) before decorating, since Triton picks interpreter or
  compiler in ``triton.jit`` at decoration time.

To force the interpreter on a CUDA machine, set ``TRITON_INTERPRET=1`` in the environment before
this module (or anything that imports it) is imported; setting it later has no effect on this
module. ``TRITON_INTERPRET=0`` on a machine without CUDA makes the planner unavailable.

Kernel design: a launch's ``BLOCK`` is the bucket of :data:`BLOCKS` that holds bs, and
:data:`DESIGNS` maps it to the design that plans it in one launch: seed programs that do only
the chain of dependent loads a seed needs (request values, table entry, LUT entry) beside scan
programs that do only the scans, totals and scalars (:mod:`impls.offsets_planner.triton_roles`);
from bs 513 on the scan is spread over several programs that pass their totals on by a
look-back (:mod:`impls.offsets_planner.triton_roles_lookback`), whose per-device workspace makes
one rule: launches of this planner on one device run on one stream at a time (as a server's
planning step does; CUDA-graph replays included). Two launches overlapping on two streams, or one
killed midway, can throw the workspace's ticket count off, and then that launch and every later
one above bs 512 may write wrong offsets until
:func:`impls.offsets_planner.triton_roles_lookback.reset_workspace` restores it. :func:`plan_launch` with a
configuration runs the earlier kernel of this module instead (:data:`CONFIG`): ``ceil(bs / TILE)``
programs each scan their own ``TILE`` lanes; when ``TILE < BLOCK`` each also sums the lengths of
every lane before its tile (a masked, ``BLOCK``-wide reduction, no inter-program communication),
and the last program writes the totals and scalars.
Every load is masked by the full condition that makes it in bounds (lane < bs; for the table also
0 <= row < max_reqs, max_seq_len > 0, prefix > 0 and a write; for the LUT a non-negative slot,
index clamped to lut_len - 1), row * stride is computed in int64, only int64 lengths are scanned
(triton#5897), and totals and scalars are written by one-lane masked vector stores, not scalar
stores (triton#5048). Nothing past the defined regions is written.

On the GPU, integer arguments are annotated int64 and excluded from value and alignment
specialisation, so a compiled kernel depends only on the device, the design's constexprs and num_warps; after
the first launch of such a key, later launches go straight to the compiled kernel's launcher
(``CompiledKernel.run``, a private Triton API, pinned in pyproject.toml; it skips
``JITFunction.run``'s binding and cache-key work) unless a Triton launch hook is set. That fast
launch is used only after a one-time self-check at :func:`probe` (:func:`self_check`: fast and
standard launch write the same bytes for a probe plan); when it fails, a one-line warning says so
and every launch takes Triton's standard path. A launch's grid and integer arguments are prepared
once per buffer set and bs (kept in :attr:`impls.offsets_planner.validate_cache.BufferSet.records`).
"""

from __future__ import annotations

from collections.abc import Callable

import torch

from impls.kernel_modes import choose_triton_mode as _choose_mode
from impls.offsets_planner.contract import REQUEST_INPUT_NAMES
from impls.offsets_planner.launch_self_check import probe_kwargs, self_check
from impls.offsets_planner.registry import Availability
from impls.offsets_planner.validate import LaunchPlan
from impls.offsets_planner.validate_cache import BufferSet, lookup, lookup_args

_INT64_MAX = (1 << 63) - 1
BLOCKS: tuple[int, ...] = (32, 128, 512, 2048, 4096)
"""Lane buckets: a launch's ``BLOCK`` is the smallest that holds bs (0..4096)."""

CONFIG: dict[int, tuple[int, int]] = {32: (32, 1), 128: (128, 4), 512: (256, 8), 2048: (256, 8),
                                      4096: (512, 16)}
"""``BLOCK -> (TILE, num_warps)``: lanes per program and warps per program for each bucket.
``TILE == BLOCK`` is one program; ``TILE < BLOCK`` is ``ceil(bs / TILE)`` programs, each summing
the lengths before its tile itself. The fastest of a sweep on an H200, 2026-11-30 (device us per
plan, bs = block: 1.61 / 2.32 / 3.10 / 4.93 / 6.19; one program over 4096 lanes took 18.9):
``reports/gpu/triton-bench.md``."""


DESIGNS: dict[int, tuple] = {32: ("roles", 32, 2, 2), 128: ("roles", 32, 2, 2),
                             512: ("roles", 32, 8, 2), 2048: ("roles-lookback", 32, 128, 8),
                             4096: ("roles-lookback", 64, 512, 8)}
"""``BLOCK -> design`` of a default launch (no configuration given): ``("roles", seed tile,
num_warps, scan programs)`` (:mod:`impls.offsets_planner.triton_roles`: seed programs that do only
the gather chain and scan programs that do only the scans, none waiting on another) or
``("roles-lookback", seed tile, scan tile, num_warps)``
(:mod:`impls.offsets_planner.triton_roles_lookback`: the scan spread over several programs that
pass their totals on by a look-back with an exact fallback, a per-device workspace). The fastest
correct configs of the one-pass sweep on an H200, 2026-12-03
(``reports/gpu/2026-12-03-d/one_pass/``: replay us per plan at bs 1 / 8 / 64 / 512 / 1024 / 4096:
2.14-2.20 / 2.20 / 2.20 / 2.59 / 3.43 / 3.61, against 2.36 / 2.51 / 2.87 / 3.77 / 5.03 / 6.97
for :data:`CONFIG`'s kernel); its look-back scan programs reduce and scan both sides as one
``[scan tile, 2]`` tensor (``JOINED``: 3.46 -> 3.29 us at bs 1024, 3.59 -> 3.50 at 4096,
``reports/gpu/2026-12-03-e/one_pass-triton-joined/``), and sends its first poll before its scan
(:data:`EARLY_POLL`: 3.35 us at 4096, 1.30x the chain floor, ``reports/gpu/2026-12-04-a/final/``).
:func:`plan_launch` with a configuration runs that kernel."""

INTERPRETER_DESIGNS: dict[int, tuple] = {32: ("roles", 32, 1, 1), 128: ("roles", 128, 1, 1),
                                         512: ("roles", 512, 1, 1),
                                         2048: ("roles-lookback", 2048, 1024, 1),
                                         4096: ("roles-lookback", 4096, 1024, 1)}
"""The same designs with the fewest programs, for Triton's interpreter (which runs programs one
after another, each op a numpy call: fewer, wider programs cost less there; the GPU's shapes are
:data:`DESIGNS`, and every shape is byte-for-byte the same plan)."""

MODE, _UNAVAILABLE = _choose_mode()
"""``gpu`` or ``interpreter`` (None when unavailable); see the module docstring."""

try:
    import triton
    import triton.language as tl
except Exception as exc:  # ImportError, or a broken install
    triton = tl = None
    MODE, _UNAVAILABLE = None, f"triton is not importable: {type(exc).__name__}: {exc}"

_INT_ARGS = ("bs", "stride0", "max_reqs", "max_seq_len", "lut_len", "window", "capacity")
_PTR_ARGS = ("rpi_ptr", "prefix_ptr", "extend_ptr", "table_ptr", "lut_ptr", "verify_ptr",
             "write_ptr", "seed_ptr", "num_valid_ptr", "enable_ptr", "reqs_ptr")

if triton is not None:

    @triton.jit
    def _lengths(rpi_ptr, prefix_ptr, extend_ptr, lane, live, window):
        # Spec section 5 for the lanes where ``live``; window > 0 is W (clamped to int64), else 0.
        zero = (lane * 0).to(tl.int64)
        row = tl.load(rpi_ptr + lane, mask=live, other=0)
        prefix = tl.load(prefix_ptr + lane, mask=live, other=0)
        extend = tl.load(extend_ptr + lane, mask=live, other=0)
        active = live & (row != 0)
        # prefix - max(prefix - W, 0) == min(prefix, W): no int64 overflow for any prefix.
        in_window = tl.where(window > 0, tl.minimum(prefix, zero + window), prefix)
        verify_len = tl.where(active, tl.maximum(in_window, zero), zero)
        write_len = tl.where(active, tl.maximum(extend, zero), zero)
        return row, prefix, active, verify_len, write_len

    @triton.jit(do_not_specialize=_INT_ARGS, do_not_specialize_on_alignment=_PTR_ARGS)
    def _offsets_kernel(
        rpi_ptr, prefix_ptr, extend_ptr, table_ptr, lut_ptr,
        verify_ptr, write_ptr, seed_ptr, num_valid_ptr, enable_ptr, reqs_ptr,
        bs: tl.int64, stride0: tl.int64, max_reqs: tl.int64, max_seq_len: tl.int64,
        lut_len: tl.int64, window: tl.int64, capacity: tl.int64,
        BLOCK: tl.constexpr, TILE: tl.constexpr, HAS_LUT: tl.constexpr,
    ):
        start = tl.program_id(0) * TILE
        lane = start + tl.arange(0, TILE)
        live = lane < bs
        zero = (lane * 0).to(tl.int64)
        row, prefix, active, verify_len, write_len = _lengths(
            rpi_ptr, prefix_ptr, extend_ptr, lane, live, window)
        carry_v = tl.sum(zero, axis=0)
        carry_w = tl.sum(zero, axis=0)
        if TILE < BLOCK:  # several programs: each sums the lengths of the lanes before its tile
            every = tl.arange(0, BLOCK)
            _r, _p, _a, v_before, w_before = _lengths(
                rpi_ptr, prefix_ptr, extend_ptr, every, every < start, window)
            carry_v += tl.sum(v_before, axis=0)
            carry_w += tl.sum(w_before, axis=0)
        # Scan int64 lengths only (a boolean cumsum is XOR on some builds: triton#5897).
        verify_incl = tl.cumsum(verify_len, axis=0)
        write_incl = tl.cumsum(write_len, axis=0)
        tl.store(verify_ptr + lane, carry_v + verify_incl - verify_len, mask=live)
        tl.store(write_ptr + lane, carry_w + write_incl - write_len, mask=live)

        # Seed: the table is read only where the read is in bounds (spec section 6).
        has_seed = active & (prefix > 0) & (write_len > 0) & (row >= 0) & (row < zero + max_reqs)
        has_seed = has_seed & (zero + max_seq_len > 0)
        pos = tl.minimum(prefix - 1, zero + (max_seq_len - 1))
        offset = row.to(tl.int64) * stride0 + pos
        slot = tl.load(table_ptr + offset, mask=has_seed, other=0).to(tl.int64)
        if HAS_LUT:
            translate = has_seed & (slot >= 0)
            index = tl.minimum(slot, zero + (lut_len - 1))
            slot = tl.where(translate, tl.load(lut_ptr + index, mask=translate, other=0), slot)
        tl.store(seed_ptr + lane, tl.where(has_seed, slot, zero - 1), mask=live)

        # Totals and scalars: lane 0 of the last program, through masked vector stores
        # (not scalar stores, whose mask an older interpreter ignored: triton#5048).
        first_lane = tl.arange(0, TILE)
        first = (first_lane == 0) & (first_lane * 0 + tl.program_id(0) == tl.num_programs(0) - 1)
        total_v = zero + (carry_v + tl.sum(verify_len, axis=0))
        tl.store(verify_ptr + bs + first_lane, total_v, mask=first)
        tl.store(write_ptr + bs + first_lane, zero + (carry_w + tl.sum(write_len, axis=0)), mask=first)
        tl.store(num_valid_ptr + first_lane, tl.minimum(total_v, zero + capacity).to(tl.int32),
                 mask=first)
        tl.store(enable_ptr + first_lane, tl.where(total_v > capacity, 0, 1).to(tl.int32), mask=first)
        tl.store(reqs_ptr + first_lane, (zero + bs).to(tl.int32), mask=first)

    _kernel = _offsets_kernel
else:
    _kernel = None


def block_for(bs: int) -> int:
    """The smallest block of :data:`BLOCKS` with at least ``bs`` lanes (bs in [0, 4096])."""
    for block in BLOCKS:
        if bs <= block:
            return block
    raise ValueError(f"bs={bs} exceeds the largest block {BLOCKS[-1]}")


FAST_LAUNCH: bool = True
"""Launch cached compiled kernels directly (GPU only); False forces ``kernel[grid](...)`` always."""

FAST_LAUNCH_CHECK: bool | None = None
"""The fast launch's one-time self-check (:func:`self_check`): None until it ran (on the GPU, at
:func:`probe`), then whether the fast launch agreed with the standard one on a probe plan."""

EARLY_POLL: bool = True
"""The look-back design's ``EARLY_POLL``: its scan programs send the first poll of the earlier
tiles' words before scanning their own tile (:mod:`impls.offsets_planner.triton_roles_lookback`).
On the H200 the best early-poll config ran 3.19 / 3.37 us at bs 1024 / 4096 against 3.28 / 3.55
for the same config polling after its scan (one sweep, 2026-12-04; its successor's figures:
``reports/gpu/2026-12-04-a/``)."""

EPOCH_LOAD: bool = False
"""The look-back design's ``EPOCH_LOAD``: its scan programs read the epoch with a load beside their
request loads and draw their ticket after their outputs, rather than take the epoch from the
ticket's atomic before publishing (:mod:`impls.offsets_planner.triton_roles_lookback`)."""

_COMPILED: dict[tuple, object] = {}  # Prepared.key -> compiled kernel
_GPU = MODE == "gpu"
_MULTI_GPU = _GPU and torch.cuda.device_count() > 1
_driver = triton.runtime.driver.active if _GPU else None
_RUNTIME_KNOBS = getattr(getattr(triton, "knobs", None), "runtime", None)


def _hooks_idle() -> bool:
    """True when no Triton launch hook is set (None, or an empty hook chain)."""
    knobs = _RUNTIME_KNOBS
    if knobs is None:
        return False
    enter, leave = knobs.launch_enter_hook, knobs.launch_exit_hook
    return ((enter is None or not getattr(enter, "calls", True))
            and (leave is None or not getattr(leave, "calls", True)))


class Prepared:
    """One plan's launch, prepared once per buffer set and bs (kept in
    :attr:`impls.offsets_planner.validate_cache.BufferSet.records`).

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
        compiled = _COMPILED.get(key)
        if compiled is not None:
            self.attach(compiled)

    def attach(self, compiled) -> None:
        """Take the compiled kernel's fast-launch handles (``run`` first: it loads the binary)."""
        self.run = compiled.run
        self.function, self.metadata = compiled.function, compiled.packed_metadata


def _design_kernel(design: str):
    """The JIT kernel of a :data:`DESIGNS` design (imported on first use: the design modules
    import this one)."""
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
    design = (DESIGNS if _GPU else INTERPRETER_DESIGNS)[block]
    window = 0 if plan.swa_window_size <= 0 else min(plan.swa_window_size, _INT64_MAX)
    ints = (plan.bs, plan.req_to_token_stride0, plan.max_reqs, plan.max_seq_len, plan.lut_len,
            window, min(plan.verify_capacity, _INT64_MAX))
    device = buffers.device.index if _MULTI_GPU else 0
    provisional = False
    if design[0] == "roles-lookback":
        ws = triton_roles_lookback.existing_workspace(buffers.device) if _GPU else None
        if ws is None and _GPU and torch.cuda.is_current_stream_capturing():
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
        tail = (*ints, block, scan_tile, tile, plan.has_swa_lut, max(2, block // scan_tile),
                False, True, EARLY_POLL, EPOCH_LOAD)  # SLOW_CARRY off; JOINED: one reduction
        key = (device, "roles-lookback", block, scan_tile, tile, plan.has_swa_lut, warps,
               EARLY_POLL, EPOCH_LOAD)
    prep = Prepared(tail, grid, key, device, tensors, _design_kernel(design[0]), warps)
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
    window = 0 if plan.swa_window_size <= 0 else min(plan.swa_window_size, _INT64_MAX)
    tail = (plan.bs, plan.req_to_token_stride0, plan.max_reqs, plan.max_seq_len, plan.lut_len,
            window, min(plan.verify_capacity, _INT64_MAX), block, tile, plan.has_swa_lut)
    device = buffers.device.index if _MULTI_GPU else 0
    key = (device, "config", block, tile, plan.has_swa_lut, warps)
    return Prepared(tail, max(1, -(-plan.bs // tile)), key, device, buffers.tensors, _kernel,
                    warps)


def _launch(plan: LaunchPlan, buffers: BufferSet, req_pool_indices, prefix_lens, extend_seq_lens,
            num_warps: int | None = None, block: int | None = None, tile: int | None = None,
            fast: bool | None = None) -> None:
    if num_warps is None and block is None and tile is None:
        records = buffers.records
        prep = records.get(plan.bs)  # this planner's records are keyed by bs alone
        if prep is None or (prep.provisional and not torch.cuda.is_current_stream_capturing()):
            prep = records[plan.bs] = _prepare(plan, buffers, None, None, None)
    else:
        prep = _prepare(plan, buffers, num_warps, block, tile)
    if not _GPU:
        prep.kernel[(prep.grid,)](req_pool_indices, prefix_lens, extend_seq_lens, *prep.suffix,
                                  num_warps=prep.warps)
        return
    run = prep.run
    if (run is not None and (FAST_LAUNCH and FAST_LAUNCH_CHECK is True if fast is None else fast)
            and _hooks_idle()
            and (not _MULTI_GPU or _driver.get_current_device() == prep.device)):
        run(prep.grid, 1, 1, _driver.get_current_stream(prep.device), prep.function,
            prep.metadata, None, None, None, req_pool_indices, prefix_lens, extend_seq_lens,
            *prep.suffix)
        return
    with torch.cuda.device(buffers.device):
        compiled = prep.kernel[(prep.grid,)](req_pool_indices, prefix_lens, extend_seq_lens,
                                             *prep.suffix, num_warps=prep.warps)
    if compiled is not None and hasattr(compiled, "packed_metadata"):
        _COMPILED[prep.key] = compiled
        prep.attach(compiled)


def _is_pow2(n: int) -> bool:
    return n > 0 and not n & (n - 1)


def _with_path(fast: bool) -> Callable[..., None]:
    """The planner forced onto the fast (compiled kernel's own launcher) or the standard launch."""
    def go(**kw) -> None:
        plan, buffers = lookup(kw)
        _launch(plan, buffers, *(kw[n] for n in REQUEST_INPUT_NAMES), fast=fast)
        if _GPU:
            torch.cuda.synchronize()
    return go


def run_self_check(device: torch.device | str | None = None,
                   fast: Callable[..., None] | None = None) -> bool:
    """Run the fast launch's self-check now and set :data:`FAST_LAUNCH_CHECK` (once per process on
    the GPU, from :func:`probe`). ``fast`` replaces the fast launch (tests: a failing one shows
    the fallback); ``device`` defaults to the current CUDA device, else the CPU."""
    global FAST_LAUNCH_CHECK
    if device is None:
        device = torch.device("cuda", torch.cuda.current_device()) if _GPU else "cpu"
    FAST_LAUNCH_CHECK = False  # until it passes
    kw = probe_kwargs(device)
    standard = _with_path(False)
    standard(**kw)  # compile, so that the fast path has a kernel to launch
    FAST_LAUNCH_CHECK = self_check(standard, fast or _with_path(True), kw)
    return FAST_LAUNCH_CHECK


def probe() -> Availability:
    """Whether this planner runs here, and how (see the module docstring for the mode rule).

    On the GPU the first call also runs the fast launch's self-check (:func:`self_check`), so that
    no call that may be under CUDA-graph capture does this one-time work.
    """
    if MODE is None:
        return Availability(False, None, "cpu", _UNAVAILABLE)
    if _GPU and FAST_LAUNCH_CHECK is None:
        run_self_check()
    return Availability(True, MODE, "cuda" if MODE == "gpu" else "cpu")


def validate_arguments(launcher_kwargs: dict) -> tuple[LaunchPlan, BufferSet]:
    """The validate-only entry: what :func:`launch` checks before it launches.

    Args:
        launcher_kwargs: the 13 arguments of spec section 3, as a dict.

    Returns:
        (plan, buffer set) for :func:`launch_validated`, from :func:`impls.offsets_planner.validate_cache.lookup`.

    Raises:
        PlanError: (a ``ValueError``) the first failing check of spec section 4.
    """
    return lookup(launcher_kwargs)


def launch_validated(validated: tuple[LaunchPlan, BufferSet], req_pool_indices: torch.Tensor,
                     prefix_lens: torch.Tensor, extend_seq_lens: torch.Tensor) -> None:
    """The launch alone, after :func:`validate_arguments` (or :meth:`BufferSet.plan_for`) passed
    for exactly these request tensors (int64 [bs], bs = the plan's)."""
    if MODE is None:
        raise RuntimeError(f"triton planner unavailable: {_UNAVAILABLE}")
    _launch(validated[0], validated[1], req_pool_indices, prefix_lens, extend_seq_lens)


def plan_launch(*, num_warps: int | None = None, block: int | None = None, tile: int | None = None,
                fast: bool | None = None, **launcher_kwargs) -> None:
    """:func:`launch` with the launch configuration exposed (tests and benchmarks).

    Args:
        num_warps: warps per program (default: :data:`CONFIG` of the block).
        block: carry width, a power of two >= bs (default :func:`block_for`); raised to ``tile``.
        tile: lanes per program, a power of two; ``tile >= block`` is a single program.
        fast: GPU only: True or False forces the compiled kernel's own launcher on or off (default:
            :data:`FAST_LAUNCH` once its self-check passed).
        launcher_kwargs: the 13 keyword arguments of spec section 3.
    """
    if MODE is None:
        raise RuntimeError(f"triton planner unavailable: {_UNAVAILABLE}")
    plan, buffers = lookup(launcher_kwargs)
    if block is not None and (block < plan.bs or not _is_pow2(block)):
        raise ValueError(f"block={block} must be a power of two >= bs={plan.bs}")
    if tile is not None and not _is_pow2(tile):
        raise ValueError(f"tile={tile} must be a power of two")
    _launch(plan, buffers, *(launcher_kwargs[n] for n in REQUEST_INPUT_NAMES), num_warps, block,
            tile, fast)


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
    """Plan offsets with one Triton launch; the launcher of spec section 3.

    Tensors as in spec section 3 (int64 [bs] inputs, int32 [max_reqs, max_seq_len] table, int64
    [lut_len] LUT or None, outputs int64 [>= 4097], [cap + 1], [cap] and int32 [1] x 3), all on one
    device: CUDA in ``gpu`` mode, CPU in ``interpreter`` mode. Writes
    ``out_verify_offsets_scratch[:bs+1]``, ``out_write_offsets[:bs+1]``,
    ``out_write_seed_slot_indices[:bs]`` and the three scalars, nothing else (spec section 5).
    No host work depends on tensor values, so it can be captured in a CUDA graph.

    Raises:
        PlanError: (a ``ValueError``) any check of spec section 4, before anything is launched,
            through :func:`impls.offsets_planner.validate_cache.lookup` (the shared validator, memoised).
    """
    if MODE is None:
        raise RuntimeError(f"triton planner unavailable: {_UNAVAILABLE}")
    # positional, in the signature's (impls.offsets_planner.contract.ARGUMENT_NAMES) order: no dict per call
    _launch(*lookup_args(req_pool_indices, prefix_lens, extend_seq_lens, req_to_token,
                         full_to_swa_index_mapping, out_verify_offsets_scratch, out_write_offsets,
                         out_write_seed_slot_indices, out_verify_num_valid, out_verify_enable,
                         out_write_num_valid_reqs, swa_window_size, verify_capacity),
            req_pool_indices, prefix_lens, extend_seq_lens)
