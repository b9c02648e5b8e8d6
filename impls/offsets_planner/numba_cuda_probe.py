"""The Numba CUDA planner's availability probe (:mod:`impls.offsets_planner.numba_cuda_planner`):
whether it runs here, in which mode, and why not.

On the GPU the probe does the one-time work no launch may do under CUDA-graph capture: every
kernel of :func:`impls.offsets_planner.numba_launch_shape.kernel_keys` compiled and loaded, the
packed launch's self-check (:mod:`impls.offsets_planner.numba_packed_launch`), the zero LUT and
the device's look-back workspace. The planner's mode, import error, ``compiled``,
``kernel_keys`` and its kernel and launch modules are read on the planner module at call time, so
that a value set there (a test) takes effect here.
"""

from __future__ import annotations

import numpy as np
import torch

from impls.kernel_modes import NUMBA_ENV
from impls.offsets_planner.registry import Availability
from impls.offsets_planner.validate import zero_lut

_probe_result: Availability | None = None


def probe() -> Availability:
    """Whether this planner runs here: mode ``gpu`` (device ``cuda``) or ``simulator`` (``cpu``).

    In ``gpu`` mode it compiles and loads every kernel once and makes the current device's
    look-back workspace (outside any capture, as the launch needs it); any failure (such as numba 0.68.0 with
    numpy 2.5, ``module 'numpy' has no attribute 'row_stack'``) makes it unavailable with the reason.
    """
    global _probe_result
    if _probe_result is None:
        _probe_result = _probe()
    return _probe_result


def _probe() -> Availability:
    if nb._IMPORT_ERROR is not None:
        return Availability(False, None, "cpu", nb._IMPORT_ERROR)
    if nb.SIMULATED:
        return Availability(True, "simulator", "cpu")
    if not torch.cuda.is_available() or not nb.cuda.is_available():
        return Availability(False, None, "cpu", (
            f"no usable CUDA device, and numba.cuda was imported without {NUMBA_ENV}=1 (set it "
            "before anything imports numba.cuda to run in the simulator)"))
    try:
        kernel = nb.compiled()
        for key in nb.kernel_keys():
            nb.packed_launch.kernel_handle(nb.compiled(key))
        device = torch.device("cuda", torch.cuda.current_device())
        if nb.packed_launch.LAUNCH is None and nb.packed_launch.LAUNCH_PATH == "driver":
            nb.packed_launch.choose_path(kernel, device)  # the packing self-check: device work
        zero_lut(device)
        nb.lookback_kernel.workspace(device)
        return Availability(True, "gpu", "cuda")
    except Exception as exc:  # noqa: BLE001 - any compile or load failure is the reason
        return Availability(False, None, "cuda", explain_failure(f"{type(exc).__name__}: {exc}"))


def explain_failure(text: str) -> str:
    """A compile failure's reason, with the fix when it is numpy 2.5's missing ``row_stack``
    (numba-cuda 0.30.4 registers ``np.row_stack`` for any numpy >= 2.0: docs/numba-numpy.md)."""
    if "row_stack" in text:
        from importlib.metadata import version

        return (f"numba-cuda {version('numba-cuda')} cannot compile CUDA kernels with numpy "
                f"{np.__version__} ({text}); install numpy<2.5 beside it, see docs/numba-numpy.md")
    return text


from impls.offsets_planner import numba_cuda_planner as nb  # noqa: E402 (last: it imports this)
