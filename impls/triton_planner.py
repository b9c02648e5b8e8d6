"""The Triton planner: the shared validator, then one single-program Triton launch.

Semantics are spec sections 5 and 6 ("this project" column), matched byte for byte against the
pure-Python planner (:mod:`impls.python_planner`).

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

Kernel design (one program of ``BLOCK`` lanes, ``BLOCK`` the bucket of :data:`BLOCKS` that holds
bs): every load is masked by the full condition that makes it in bounds (lane < bs; for the table,
also 0 <= row < max_reqs, max_seq_len > 0, prefix > 0 and a write; for the LUT, a non-negative slot,
index clamped to lut_len - 1), row * stride is computed in int64, only int64 lengths are scanned
(triton#5897), and the totals and the three scalars are written with one-lane masked vector
stores rather than scalar stores (triton#5048). Nothing past the defined regions is written.

On the GPU, integer arguments are annotated int64 and excluded from value and alignment
specialisation, so the compiled kernel depends only on (device, BLOCK, HAS_LUT, num_warps); after
the first launch of such a key, later launches go straight to the compiled kernel's launcher
(skipping ``JITFunction.run``'s binding and cache-key work) unless a Triton launch hook is set.
"""

from __future__ import annotations

import os

import torch

from impls.registry import Availability
from impls.validate import LaunchPlan
from impls.validate_cache import validate_launch_cached

_INT64_MAX = (1 << 63) - 1
BLOCKS: tuple[int, ...] = (32, 128, 512, 2048, 4096)
"""Lane counts the kernel is compiled for; a launch uses the smallest that holds bs (0..4096)."""

NUM_WARPS: dict[int, int] = {32: 1, 128: 1, 512: 4, 2048: 4, 4096: 8}
"""Default warps per program for each block (chosen by measurement on an H200: see
``reports/gpu/triton-bench.md``)."""


def _truthy(value: str | None) -> bool:
    return value is not None and value.strip().lower() in ("1", "true", "on", "yes", "y")


def _choose_mode() -> tuple[str | None, str | None]:
    env = os.environ.get("TRITON_INTERPRET")
    if _truthy(env):
        return "interpreter", None
    if torch.cuda.is_available():
        return "gpu", None
    if env is not None and env.strip() != "":
        return None, f"TRITON_INTERPRET={env!r} forbids the interpreter and torch sees no CUDA device"
    os.environ["TRITON_INTERPRET"] = "1"
    return "interpreter", None


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

    @triton.jit(do_not_specialize=_INT_ARGS, do_not_specialize_on_alignment=_PTR_ARGS)
    def _offsets_kernel(
        rpi_ptr, prefix_ptr, extend_ptr, table_ptr, lut_ptr,
        verify_ptr, write_ptr, seed_ptr, num_valid_ptr, enable_ptr, reqs_ptr,
        bs: tl.int64, stride0: tl.int64, max_reqs: tl.int64, max_seq_len: tl.int64,
        lut_len: tl.int64, window: tl.int64, capacity: tl.int64,
        BLOCK: tl.constexpr, HAS_LUT: tl.constexpr,
    ):
        # Spec section 5 per lane r < bs; window > 0 is W (clamped to int64), else 0.
        lane = tl.arange(0, BLOCK)
        live = lane < bs
        zero = tl.zeros([BLOCK], dtype=tl.int64)
        row = tl.load(rpi_ptr + lane, mask=live, other=0)
        prefix = tl.load(prefix_ptr + lane, mask=live, other=0)
        extend = tl.load(extend_ptr + lane, mask=live, other=0)
        active = live & (row != 0)
        # prefix - max(prefix - W, 0) == min(prefix, W): no int64 overflow for any prefix.
        in_window = tl.where(window > 0, tl.minimum(prefix, zero + window), prefix)
        verify_len = tl.where(active, tl.maximum(in_window, zero), zero)
        write_len = tl.where(active, tl.maximum(extend, zero), zero)
        # Scan int64 lengths only (a boolean cumsum is XOR on some builds: triton#5897).
        verify_incl = tl.cumsum(verify_len, axis=0)
        write_incl = tl.cumsum(write_len, axis=0)
        tl.store(verify_ptr + lane, verify_incl - verify_len, mask=live)
        tl.store(write_ptr + lane, write_incl - write_len, mask=live)
        total_verify = tl.sum(verify_len, axis=0)
        total_write = tl.sum(write_len, axis=0)

        # Seed: the table is read only where the read is in bounds (spec section 6).
        has_seed = active & (prefix > 0) & (write_len > 0) & (row >= 0) & (row < max_reqs)
        has_seed = has_seed & (max_seq_len > 0)
        pos = tl.minimum(prefix - 1, zero + (max_seq_len - 1))
        offset = row.to(tl.int64) * stride0 + pos
        slot = tl.load(table_ptr + offset, mask=has_seed, other=0).to(tl.int64)
        if HAS_LUT:
            translate = has_seed & (slot >= 0)
            index = tl.minimum(slot, zero + (lut_len - 1))
            slot = tl.where(translate, tl.load(lut_ptr + index, mask=translate, other=0), slot)
        tl.store(seed_ptr + lane, tl.where(has_seed, slot, zero - 1), mask=live)

        # Totals and scalars through lane 0 only (masked vector stores, not scalar stores).
        first = lane == 0
        tl.store(verify_ptr + bs + lane, zero + total_verify, mask=first)
        tl.store(write_ptr + bs + lane, zero + total_write, mask=first)
        capped = tl.minimum(zero + total_verify, zero + capacity)
        tl.store(num_valid_ptr + lane, capped.to(tl.int32), mask=first)
        enable = tl.where(zero + total_verify > capacity, 0, 1)
        tl.store(enable_ptr + lane, enable.to(tl.int32), mask=first)
        tl.store(reqs_ptr + lane, (zero + bs).to(tl.int32), mask=first)

    _kernel = _offsets_kernel
else:
    _kernel = None


def probe() -> Availability:
    """Whether this planner runs here, and how (see the module docstring for the mode rule)."""
    if MODE is None:
        return Availability(False, None, "cpu", _UNAVAILABLE)
    return Availability(True, MODE, "cuda" if MODE == "gpu" else "cpu")


def block_for(bs: int) -> int:
    """The smallest block of :data:`BLOCKS` with at least ``bs`` lanes (bs in [0, 4096])."""
    for block in BLOCKS:
        if bs <= block:
            return block
    raise ValueError(f"bs={bs} exceeds the largest block {BLOCKS[-1]}")


# (device index, BLOCK, HAS_LUT, num_warps) -> compiled kernel, filled by the first launch of a key.
_COMPILED: dict[tuple, object] = {}
FAST_LAUNCH: bool = True
"""Launch cached compiled kernels directly (GPU only); False forces ``kernel[grid](...)`` always."""


def _launch(plan: LaunchPlan, kw: dict, num_warps: int | None, block: int | None,
            fast: bool | None) -> None:
    block = block_for(plan.bs) if block is None else block
    warps = NUM_WARPS[block] if num_warps is None else num_warps
    window = 0 if plan.swa_window_size <= 0 else min(plan.swa_window_size, _INT64_MAX)
    args = (
        kw["req_pool_indices"], kw["prefix_lens"], kw["extend_seq_lens"], kw["req_to_token"],
        plan.lut_tensor, kw["out_verify_offsets_scratch"], kw["out_write_offsets"],
        kw["out_write_seed_slot_indices"], kw["out_verify_num_valid"], kw["out_verify_enable"],
        kw["out_write_num_valid_reqs"],
        plan.bs, plan.req_to_token_stride0, plan.max_reqs, plan.max_seq_len, plan.lut_len,
        window, min(plan.verify_capacity, _INT64_MAX), block, plan.has_swa_lut,
    )
    if MODE != "gpu":
        _kernel[(1,)](*args, num_warps=warps)
        return
    scratch = kw["out_verify_offsets_scratch"]
    key = (scratch.device.index, block, plan.has_swa_lut, warps)
    compiled = _COMPILED.get(key)
    if compiled is not None and (FAST_LAUNCH if fast is None else fast):
        knobs = triton.knobs.runtime
        if (knobs.launch_enter_hook is None and knobs.launch_exit_hook is None
                and _driver.get_current_device() == key[0]):
            stream = _driver.get_current_stream(key[0])
            compiled.run(1, 1, 1, stream, compiled.function, compiled.packed_metadata, None,
                         None, None, *args)
            return
    with torch.cuda.device(scratch.device):
        compiled = _kernel[(1,)](*args, num_warps=warps)
    if compiled is not None and hasattr(compiled, "packed_metadata"):
        _COMPILED[key] = compiled


_driver = triton.runtime.driver.active if MODE == "gpu" else None


def plan_launch(*, num_warps: int | None = None, block: int | None = None,
                fast: bool | None = None, **launcher_kwargs) -> None:
    """:func:`launch` with the launch configuration exposed (tests and benchmarks).

    Args:
        num_warps: warps per program (default :data:`NUM_WARPS` of the block).
        block: lanes per program, a power of two >= bs (default :func:`block_for`).
        fast: GPU only: use the cached compiled kernel's launcher (default :data:`FAST_LAUNCH`).
        launcher_kwargs: the 13 keyword arguments of spec section 3.
    """
    if MODE is None:
        raise RuntimeError(f"triton planner unavailable: {_UNAVAILABLE}")
    plan = validate_launch_cached(**launcher_kwargs)
    if block is not None and (block < plan.bs or block & (block - 1)):
        raise ValueError(f"block={block} must be a power of two >= bs={plan.bs}")
    _launch(plan, launcher_kwargs, num_warps, block, fast)


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
            through :func:`impls.validate_cache.validate_launch_cached` (the shared validator).
    """
    kw = {
        "req_pool_indices": req_pool_indices,
        "prefix_lens": prefix_lens,
        "extend_seq_lens": extend_seq_lens,
        "req_to_token": req_to_token,
        "full_to_swa_index_mapping": full_to_swa_index_mapping,
        "out_verify_offsets_scratch": out_verify_offsets_scratch,
        "out_write_offsets": out_write_offsets,
        "out_write_seed_slot_indices": out_write_seed_slot_indices,
        "out_verify_num_valid": out_verify_num_valid,
        "out_verify_enable": out_verify_enable,
        "out_write_num_valid_reqs": out_write_num_valid_reqs,
        "swa_window_size": swa_window_size,
        "verify_capacity": verify_capacity,
    }
    if MODE is None:
        raise RuntimeError(f"triton planner unavailable: {_UNAVAILABLE}")
    _launch(validate_launch_cached(**kw), kw, None, None, None)
