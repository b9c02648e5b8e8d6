"""Load-time checks of a step's overrides (``overrides``: what turns valid inputs into faulty
ones, :mod:`conformance.engine.inputs`): an override of a LUT the case does not have, a device
that torch on this machine cannot put a tensor on, a shape of more than
:data:`~conformance.corpus.limits.MAX_OVERRIDE_ELEMENTS` elements, and any override on a step that
expects outputs rather than an error.

The last is refused because the golden and the rule that decides each element (spec section 8)
are read from the step's inputs as the case writes them, before overrides: on a step that expects
outputs, a ``swap`` of two request arrays or a ``shape`` (a zero-filled tensor) would hand the
planner other values than the ones it is judged against (cases/<subject>/README.md, *Overrides*).

:func:`override_error` and :func:`golden_override_error` return a
:data:`~conformance.corpus.size_checks.Fault` (a JSON path relative to the step, and a message)
or None.
"""

from __future__ import annotations

import json

import torch

from conformance.corpus.corpus_subject import NAME as _NAME
from conformance.corpus.corpus_subject import contract as _contract
from conformance.corpus.limits import MAX_ARRAY_LEN, MAX_OVERRIDE_ELEMENTS
from conformance.corpus.size_checks import Fault

LUT_NAME = _contract.LUT_NAME
SHOWN_OVERRIDE = 72
"""Longest override a fault message shows whole (as compact JSON: every swap and every override
but a long shape fits); a longer one is cut."""


def device_error(name: str) -> str | None:
    """Why torch on this machine cannot put a tensor on device ``name``; None when it can."""
    try:
        device = torch.device(name)
    except (RuntimeError, ValueError) as exc:
        return str(exc)
    if device.type in ("cpu", "meta"):
        return None
    if device.type == "cuda":
        count = torch.cuda.device_count() if torch.cuda.is_available() else 0
        if (device.index or 0) < count:
            return None
        return f"{name!r}: this machine has {count} CUDA device{'s' * (count != 1)}"
    backend = getattr(torch, device.type, None)
    if backend is not None and getattr(backend, "is_available", lambda: False)():
        return None
    return f"{name!r}: torch sees no {device.type} device on this machine"


def override_error(overrides: list, inputs: dict) -> Fault | None:
    """An override of a LUT the case does not have, a device this machine lacks, a shape over
    :data:`MAX_OVERRIDE_ELEMENTS`."""
    for k, override in enumerate(overrides):
        if override.get("tensor") == LUT_NAME and inputs.get("lut") is None:
            return f".overrides[{k}]", "overrides the LUT, which is null in this case"
        if "device" in override:
            fault = device_error(override["device"])
            if fault:
                return f".overrides[{k}].device", f"device {fault}"
        shape = override.get("shape", [])
        n = _elements(shape)
        if n > MAX_OVERRIDE_ELEMENTS:
            shown = shape if len(shape) <= 8 else f"of {len(shape)} dimensions"
            count = f"{n} elements" if n <= MAX_ARRAY_LEN ** 2 else \
                f"over {MAX_ARRAY_LEN ** 2} elements"
            return (f".overrides[{k}].shape",
                    f"shape {shown} has {count}, over the limit of {MAX_OVERRIDE_ELEMENTS}")
    return None


def golden_override_error(case_id: str, step: int | None, overrides: list) -> Fault | None:
    """A fault at the first of ``overrides`` (schema-checked override dicts) of a step that expects
    outputs (a golden), not an error; None when there is none. The judge reads the golden and each
    element's rule (spec section 8) from the inputs as written, so an override there would judge
    the planner on values it was not given. ``step`` is the step's index in ``steps``, None for a
    case without steps; the message names the case, the step and the override, and stays within
    :data:`conformance.corpus.case_file.MAX_MESSAGE` for the longest id and override shown."""
    if not overrides:
        return None
    shown = json.dumps(overrides[0], separators=(",", ":"))
    if len(shown) > SHOWN_OVERRIDE:
        shown = shown[:SHOWN_OVERRIDE] + "..."
    where = f"case {case_id!r}" + ("" if step is None else f" step {step}")
    return ".overrides[0]", (
        f"{where}: override {shown} on a step that expects outputs: its golden and element rules "
        f"(spec §8) read the inputs as written, not the planner's; expect its error, or drop it "
        f"(cases/{_NAME}/README.md, Overrides)")


def _elements(shape: list[int]) -> int:
    """Elements of a tensor of ``shape``, capped just past MAX_ARRAY_LEN ** 2: a long shape of
    huge sizes is never multiplied out into an integer of millions of digits."""
    n = 1
    for size in shape:
        n *= size
        if n > MAX_ARRAY_LEN ** 2:
            return MAX_ARRAY_LEN ** 2 + 1
    return n
