"""A launch path's one-time self-check: a fast launch must write what the standard one writes.

Planners that launch through a framework's private API (the Triton planner's
``CompiledKernel.run``) check it once, outside any CUDA-graph capture, on a small fixed probe plan
(:func:`probe_kwargs`), and keep the framework's standard launch when it disagrees or fails
(:func:`self_check`), so that a new framework release never crashes or silently misplans.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable

import torch

from impls.offsets_planner.buffers import PlanBuffers
from impls.offsets_planner.contract import (
    OUTPUT_NAMES,
    REQUEST_INPUT_NAMES,
    SWA_WINDOW_NAME,
    TABLE_INPUT_NAMES,
    VERIFY_CAPACITY_NAME,
)


def probe_kwargs(device: torch.device | str) -> dict:
    """The 13 arguments of a small fixed plan (bs 37, padding rows, a LUT, W = 8) on ``device``:
    the self-check's probe plan. Values are distinct, so a misplaced argument shows."""
    bs, rows, cols = 37, 48, 40
    rpi = torch.tensor([0 if i % 7 == 3 else 1 + (i * 5) % (rows - 1) for i in range(bs)])
    prefix = torch.tensor([(i * 11) % (cols + 5) for i in range(bs)])
    extend = torch.tensor([1 + (i % 4) * 3 if i % 5 else 0 for i in range(bs)])
    table = (torch.arange(rows * cols, dtype=torch.int32).reshape(rows, cols) * 7) % 3001
    lut = torch.arange(3001, dtype=torch.int64) * 3 + 1
    buffers = PlanBuffers.allocate(write_req_capacity=64, device=device,
                                   **{VERIFY_CAPACITY_NAME: 200})
    kw = dict(zip(REQUEST_INPUT_NAMES + TABLE_INPUT_NAMES,
                  (t.to(device) for t in (rpi, prefix, extend, table, lut))))
    kw[SWA_WINDOW_NAME] = 8
    kw.update(buffers.launcher_kwargs())
    return kw


def self_check(standard: Callable[..., None], fast: Callable[..., None], kw: dict, *,
               name: str = "triton planner", fallback: str = "Triton's standard launch") -> bool:
    """Whether ``fast`` writes exactly what ``standard`` writes for the probe plan ``kw``.

    Each runs on its own poisoned copy of the outputs. On a disagreement or an exception of
    ``fast`` it warns once (one line, :class:`RuntimeWarning`, naming the planner ``name`` and
    what it falls back to) and returns False: the caller then keeps the standard launch.
    ``standard`` raising propagates (the planner itself is broken).
    """
    outs = OUTPUT_NAMES

    def run(fn) -> list[torch.Tensor]:
        copy = dict(kw, **{n: torch.full_like(kw[n], -7) for n in outs})
        fn(**copy)
        return [copy[n] for n in outs]

    want = run(standard)
    try:
        got = run(fast)
        reason = None if all(torch.equal(a, b) for a, b in zip(want, got)) else "wrong outputs"
    except Exception as exc:  # noqa: BLE001 - any failure of Triton's private launcher: fall back
        reason = f"{type(exc).__name__}: {exc}"
    if reason is not None:
        warnings.warn(f"{name}: the fast launch fails its self-check ({reason}); using "
                      f"{fallback}", RuntimeWarning, stacklevel=2)
    return reason is None
