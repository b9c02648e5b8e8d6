"""Process-global torch state a planner must leave as it found it.

A launcher that sets the default device, dtype, grad mode or a determinism flag changes every
later tensor op of the process it runs in: in a server, the model's; in the harness, the next
case's and the next planner's. :func:`snapshot` reads each setting; :func:`changes` names what
differs; :func:`restore` puts the old values back (in-process runs), while the isolation worker is
replaced instead (:mod:`conformance.robustness.isolation`).
"""

from __future__ import annotations

from collections.abc import Callable

import torch


def _set_default_device(device) -> None:
    # torch.get_default_device() is "cpu" when none was set; setting None drops the device context
    torch.set_default_device(None if torch.device(device).type == "cpu" else device)


def _set_deterministic(value: tuple[bool, bool]) -> None:
    torch.use_deterministic_algorithms(value[0], warn_only=value[1])


def _cudnn(attr: str):
    return (lambda: getattr(torch.backends.cudnn, attr),
            lambda value: setattr(torch.backends.cudnn, attr, value))


SETTINGS: dict[str, tuple[Callable[[], object], Callable[[object], None]]] = {
    "default device": (lambda: str(torch.get_default_device()), _set_default_device),
    "default dtype": (torch.get_default_dtype, torch.set_default_dtype),
    "grad mode": (torch.is_grad_enabled, torch.set_grad_enabled),
    "inference mode": (torch.is_inference_mode_enabled, None),
    "deterministic algorithms": (
        lambda: (torch.are_deterministic_algorithms_enabled(),
                 torch.is_deterministic_algorithms_warn_only_enabled()), _set_deterministic),
    "anomaly detection": (torch.is_anomaly_enabled, torch.set_anomaly_enabled),
    "float32 matmul precision": (torch.get_float32_matmul_precision,
                                 torch.set_float32_matmul_precision),
    "cuda matmul allow_tf32": (lambda: torch.backends.cuda.matmul.allow_tf32,
                               lambda v: setattr(torch.backends.cuda.matmul, "allow_tf32", v)),
    "cudnn enabled": _cudnn("enabled"),
    "cudnn deterministic": _cudnn("deterministic"),
    "cudnn benchmark": _cudnn("benchmark"),
    "intra-op threads": (torch.get_num_threads, torch.set_num_threads),
}
"""Name -> (getter, setter or None when it cannot be set back from outside its context)."""


def snapshot() -> dict[str, object]:
    """Every setting of :data:`SETTINGS` now (values are plain, comparable Python objects)."""
    return {name: get() for name, (get, _) in SETTINGS.items()}


def changes(before: dict[str, object], after: dict[str, object]) -> list[str]:
    """``["default dtype: torch.float32 -> torch.float64", ...]`` for every setting that differs."""
    return [f"{name}: {before[name]} -> {after[name]}" for name in before
            if before[name] != after.get(name)]


def restore(before: dict[str, object]) -> list[str]:
    """Set every changed setting back to its value in ``before``; returns the names that could not
    be set back (a setting without a setter, or one whose setter raised)."""
    stuck = []
    now = snapshot()
    for name, value in before.items():
        if now[name] == value:
            continue
        setter = SETTINGS[name][1]
        try:
            if setter is None:
                raise RuntimeError
            setter(value)
        except Exception:  # noqa: BLE001 - reported to the caller, which replaces the process
            stuck.append(name)
    return stuck
