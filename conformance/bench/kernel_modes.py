"""How the bench's own kernels (the floors) run where there is no CUDA device: the same choice the
subject's Triton and Numba planners make when they are imported, made here so that a floor kernel
defined before any planner is imported runs as the planners do (and a planner imported after it
finds the variable it would have set itself).

* :func:`prepare_triton`: before a module decorates a ``@triton.jit`` kernel. ``TRITON_INTERPRET``
  true: the interpreter; torch sees a CUDA device: compiled; set to something else with no CUDA
  device: left as it is (the kernel cannot run); unset or empty with no CUDA device: set to ``1``
  (Triton reads it when ``@triton.jit`` runs).
* :func:`numba_simulated`: before anything imports ``numba.cuda`` (Numba reads
  ``NUMBA_ENABLE_CUDASIM`` once, then): unset, no CUDA device and ``numba.cuda`` not imported yet:
  set to ``1``; then whether ``numba.cuda`` runs in Numba's CUDA simulator.
"""

from __future__ import annotations

import importlib
import os
import sys

import torch

TRITON_ENV = "TRITON_INTERPRET"
NUMBA_ENV = "NUMBA_ENABLE_CUDASIM"


def _truthy(value: str | None) -> bool:
    return value is not None and value.strip().lower() in ("1", "true", "on", "yes", "y")


def prepare_triton() -> str | None:
    """Choose Triton's mode for kernels decorated after this call: ``interpreter`` or ``gpu``, or
    None when ``TRITON_INTERPRET`` forbids the interpreter and torch sees no CUDA device."""
    env = os.environ.get(TRITON_ENV)
    if _truthy(env):
        return "interpreter"
    if torch.cuda.is_available():
        return "gpu"
    if env is not None and env.strip() != "":
        return None
    os.environ[TRITON_ENV] = "1"
    return "interpreter"


def numba_simulated() -> bool:
    """Choose Numba's CUDA mode (if nothing has imported ``numba.cuda`` yet) and say whether it is
    the simulator. Raises what importing ``numba.cuda`` raises when it cannot be imported."""
    if os.environ.get(NUMBA_ENV) is None and "numba.cuda" not in sys.modules \
            and not torch.cuda.is_available():
        os.environ[NUMBA_ENV] = "1"
    importlib.import_module("numba.cuda")  # fixes the mode
    from numba.cuda.core import config

    return bool(config.ENABLE_CUDASIM)
