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

Kernel design (:mod:`impls.offsets_planner.triton_launch_design`): :data:`DESIGNS` picks by bs
the design that plans it in one launch; from bs 513 on its scan programs pass their totals on by a
look-back (:mod:`impls.offsets_planner.triton_roles_lookback`), whose per-device workspace makes
one rule: launches of this planner on one device run on one stream at a time (as a server's
planning step does; CUDA-graph replays included). Two launches overlapping on two streams, or one
killed midway, can throw the workspace's ticket count off, and then that launch and every later
one above bs 512 may write wrong offsets until
:func:`impls.offsets_planner.triton_roles_lookback.reset_workspace` restores it. :func:`plan_launch` with a
configuration runs the earlier kernel instead (:data:`CONFIG`,
:mod:`impls.offsets_planner.triton_config_kernel`).
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
launch is used only after a one-time self-check at :func:`probe` (:func:`run_self_check`: fast
and standard launch write the same bytes for a probe plan); when it fails, a one-line warning says
so and every launch takes Triton's standard path. A launch's grid and integer arguments are
prepared once per buffer set and bs (:mod:`impls.offsets_planner.triton_prepared_launch`, kept in
:attr:`impls.offsets_planner.buffer_set.BufferSet.records`).
"""

from __future__ import annotations

import torch

from impls.kernel_modes import choose_triton_mode as _choose_mode
from impls.offsets_planner.buffer_set import BufferSet
from impls.offsets_planner.contract import REQUEST_INPUT_NAMES
from impls.offsets_planner.launch_self_check import probe_kwargs, self_check  # noqa: F401 (tests)
from impls.offsets_planner.registry import Availability
from impls.offsets_planner.triton_launch_design import (  # noqa: F401 (the planner's names)
    BLOCKS, CONFIG, DESIGNS, INTERPRETER_DESIGNS, block_for)
from impls.offsets_planner.triton_prepared_launch import (  # noqa: F401 (the planner's names)
    Prepared, _design_kernel, _prepare, _prepare_design, run_self_check)
from impls.offsets_planner.validate import LaunchPlan
from impls.offsets_planner.validate_cache import lookup, lookup_args

_INT64_MAX = (1 << 63) - 1

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


FAST_LAUNCH: bool = True
"""Launch cached compiled kernels directly (GPU only); False forces ``kernel[grid](...)`` always."""

FAST_LAUNCH_CHECK: bool | None = None
"""The fast launch's one-time self-check (:func:`self_check`): None until it ran (on the GPU, at
:func:`probe`, or at the first launch not under CUDA-graph capture of a caller that never probed),
then whether the fast launch agreed with the standard one on a probe plan. Until it ran, every
launch takes Triton's standard path (about 2x the fast one's host time on an H100,
``reports/gpu/2026-12-06-g/``)."""

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
    if FAST_LAUNCH_CHECK is None and fast is None and not torch.cuda.is_current_stream_capturing():
        run_self_check()  # a caller that never probed (a server calling launch): once, not captured
        return _launch(plan, buffers, req_pool_indices, prefix_lens, extend_seq_lens, num_warps,
                       block, tile)  # off the fast path's way: it reads the check's verdict
    with torch.cuda.device(buffers.device):
        compiled = prep.kernel[(prep.grid,)](req_pool_indices, prefix_lens, extend_seq_lens,
                                             *prep.suffix, num_warps=prep.warps)
    if compiled is not None and hasattr(compiled, "packed_metadata"):
        _COMPILED[prep.key] = compiled
        prep.attach(compiled)


def _is_pow2(n: int) -> bool:
    return n > 0 and not n & (n - 1)


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


# Last: the configurable kernel's module reads this one's triton, _lengths and argument names.
from impls.offsets_planner.triton_config_kernel import _offsets_kernel  # noqa: E402

_kernel = _offsets_kernel
"""The configurable kernel (None without Triton), read here by the prepared launches at call time."""
