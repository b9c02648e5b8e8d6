"""The Triton dependent-load chain kernel of the ``chain-triton`` floor
(conformance/bench/chain_floors.py).

Per lane: load the three request inputs, then the table entry they point at, then the LUT entry
that points at, and write one value: the loads a planner cannot avoid, in the order it must make
them, with no scan. A module of its own for the reason given in
:mod:`conformance.bench.empty_triton`.
"""

import sys

from conformance.bench.kernel_modes import TRITON_REBOUND, prepare_triton, watch_kernels

prepare_triton()  # first: chooses the interpreter without CUDA, as the Triton planner does

import triton  # noqa: E402
import triton.language as tl  # noqa: E402


@triton.jit
def chain_kernel(rpi_ptr, prefix_ptr, extend_ptr, table_ptr, lut_ptr, out_ptr, bs, stride0,
                 max_reqs, max_seq_len, lut_len, BLOCK: tl.constexpr, HAS_LUT: tl.constexpr):
    """out[lane] = lut[table[rpi[lane], prefix[lane] - 1]] for lane < bs (masked, clamped)."""
    lane = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    live = lane < bs
    row = tl.load(rpi_ptr + lane, mask=live, other=0)
    prefix = tl.load(prefix_ptr + lane, mask=live, other=0)
    extend = tl.load(extend_ptr + lane, mask=live, other=0)
    pos = tl.minimum(prefix - 1, max_seq_len - 1)  # < 0 for a table with no columns
    has = live & (row > 0) & (row < max_reqs) & (prefix > 0) & (extend > 0) & (pos >= 0)
    slot = tl.load(table_ptr + row * stride0 + pos, mask=has, other=0).to(tl.int64)
    if HAS_LUT:
        ok = has & (slot >= 0)
        slot = tl.load(lut_ptr + tl.minimum(slot, lut_len - 1), mask=ok, other=-1)
    tl.store(out_ptr + lane, tl.where(has, slot, -1), mask=live)


# a rebound kernel, or one slowed through its state (a pre-run hook): every figure after it refused
watch_kernels(sys.modules[__name__], TRITON_REBOUND, "chain_kernel")
