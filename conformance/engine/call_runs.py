"""The runs of a one-call case (:mod:`conformance.engine.one_call`) and what each fills a call's
memory with before the call.

:data:`RUNS`: ``a`` and ``b`` fill with poison (:func:`conformance.engine.inputs.poison_values`,
random per element, positive in ``a`` and negative in ``b``), ``plain`` with values a stale plan
could hold (:func:`conformance.engine.inputs.stale_plan_values`), so that a planner right only on
poison-sized fills is seen; all drawn from the process's poison seed. :func:`output_fill` is an
output tensor's fill (its dtype and shape); :func:`uncovered_fill`, the int64 values of the bytes
of an allocation that no argument's view covers.
"""

from __future__ import annotations

import torch

from conformance.engine.inputs import poison_values, stale_plan_values

PLAIN = "plain"
RUNS = ("a", "b", PLAIN)
"""The runs of a case: two on poison, one on a stale plan's values."""


def output_fill(run: str, index: int, tensor: torch.Tensor) -> torch.Tensor:
    """Run ``run``'s fill for output number ``index`` (rolled, so no two outputs share values)."""
    n = max(tensor.numel(), 1)
    values = (stale_plan_values(tensor.dtype, n) if run == PLAIN
              else poison_values(run, tensor.dtype, n))[: tensor.numel()]
    return torch.roll(values, index).reshape(tensor.shape)


def uncovered_fill(run: str):
    """What run ``run`` fills the bytes no view covers with (:mod:`conformance.engine.allocations`):
    ``fill(n)``, ``n`` int64 values of its poison, or of a stale plan's values in ``plain``."""
    if run == PLAIN:
        return lambda n: stale_plan_values(torch.int64, n)
    return lambda n: poison_values(run, torch.int64, n)
