"""One C call that checks the metadata of many tensors: the memo's fast path.

Reading a tensor's metadata from Python costs 45-85 ns an attribute (``data_ptr()``, ``dtype``,
``shape``, ``is_contiguous()``), and a launcher call of spec section 3 has eleven tensors: about
2.5 us of attribute reads before any check. :func:`guard_for` builds PyTorch's own tensor guard
(``torch._C._dynamo.guards.TensorGuards``, the check TorchDynamo ran before each compiled frame)
for a list of tensors; its ``check(*tensors)`` compares, in C++, each tensor's type (exactly
``torch.Tensor``), dispatch key set (device type, inference mode, autograd), dtype, device index,
``requires_grad``, sizes and strides with the expected ones, in about 100 ns a tensor. A size or
stride given as None is not compared (a request tensor's length bs).

It reads no data pointer (the memo compares those itself) and it is a private API: every guard
it builds is checked at import against the attacks the memo must catch (:func:`_works`: another
dtype with the same data pointer, a resize, ``as_strided_``, another device, a second dimension,
a stride, a subclass, an inference-mode tensor); when any check there fails, or the API is missing
(another PyTorch), :data:`AVAILABLE` is False and :func:`guard_for` returns None: the memo then
reads every attribute in Python as before. A guard only ever says "unchanged" for tensors whose
every compared field is equal, so a False (or a state it was not built in: grad mode, say) sends
the call down the full path, never past a check.

Note: ``TensorGuards`` built without explicit sizes and strides crashes the process on
torch 2.13 (a segmentation fault), so :func:`guard_for` always passes both.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import torch

try:
    from torch._C._dynamo.guards import TensorGuards as _TensorGuards
except ImportError:  # another PyTorch: the Python path only
    _TensorGuards = None


def guard_for(tensors: Sequence[torch.Tensor], sizes: Sequence[list], strides: Sequence[list]
              ) -> Callable[..., bool] | None:
    """``check(*tensors) -> bool``: True only when every tensor has exactly the expected type
    (``torch.Tensor``), dispatch keys, dtype, device and ``requires_grad`` of the tensor at the
    same place in ``tensors`` and the expected ``sizes`` / ``strides`` (lists of ints, None for a
    dimension not compared), in the grad mode it was built in. None when guards are unavailable
    or a tensor is not exactly a ``torch.Tensor``.

    Raises:
        TypeError: (from ``check``) a call with another number of arguments.
    """
    if not AVAILABLE or any(type(t) is not torch.Tensor for t in tensors):
        return None
    return _build(tensors, sizes, strides)


def _build(tensors, sizes, strides):
    try:
        guard = _TensorGuards(*tensors, dynamic_dims_sizes=[list(s) for s in sizes],
                              dynamic_dims_strides=[list(s) for s in strides])
    except Exception:  # noqa: BLE001 (a guard it cannot build: the Python path)
        return None
    return guard.check


def _works() -> bool:
    """Whether the guard accepts an unchanged tensor and a new request tensor of another length,
    and rejects each change the memo must see (module docstring)."""
    if _TensorGuards is None:
        return False
    try:
        base = torch.zeros(8, dtype=torch.int64)
        check = _build([base, base], [[8], [None]], [[1], [1]])
        if check is None or not check(base, torch.zeros(3, dtype=torch.int64)):
            return False
        request = torch.zeros(3, dtype=torch.int64)

        def changed(mutate) -> torch.Tensor:
            t = torch.zeros(16, dtype=torch.int64)[:8]
            mutate(t)
            return t

        with torch.inference_mode():
            inference = torch.zeros(8, dtype=torch.int64)
        rejected = [
            changed(lambda t: setattr(t, "data", t.view(torch.float64))),  # same data pointer
            changed(lambda t: setattr(t, "data", t.view(torch.int32)[:8])),
            changed(lambda t: t.resize_(4)),
            changed(lambda t: t.as_strided_((8,), (2,))),
            changed(lambda t: t.unsqueeze_(0)),
            torch.zeros(8, dtype=torch.int64, device="meta"),
            torch.zeros(8, dtype=torch.int64).as_subclass(type("Sub", (torch.Tensor,), {})),
            inference,
        ]
        if any(check(t, request) for t in rejected):
            return False
        bad_requests = [torch.zeros(3, dtype=torch.int32), torch.zeros(6, dtype=torch.int64)[::2],
                        torch.zeros(1, 3, dtype=torch.int64),
                        torch.zeros(3, dtype=torch.int64, device="meta")]
        return not any(check(base, r) for r in bad_requests)
    except Exception:  # noqa: BLE001 (any surprise: the Python path)
        return False


AVAILABLE: bool = _works()
"""Whether :func:`guard_for` builds guards here (the import-time self-check passed)."""
