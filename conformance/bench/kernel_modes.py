"""How the bench's own kernels (the floors) run where there is no CUDA device: the choice every
subject's Triton and Numba planners make when they are imported (:mod:`impls.kernel_modes`), made
here before a floor kernel is defined, so that it runs as the planners do (and a planner imported
after it finds the variable it would have set itself).

* :func:`prepare_triton`: before a module decorates a ``@triton.jit`` kernel;
* :func:`numba_simulated`: before anything imports ``numba.cuda``; says whether it is the simulator.
"""

from __future__ import annotations

import importlib

from impls.kernel_modes import choose_numba_simulator, choose_triton_mode


def prepare_triton() -> str | None:
    """Choose Triton's mode for kernels decorated after this call: ``interpreter`` or ``gpu``, or
    None when ``TRITON_INTERPRET`` forbids the interpreter and torch sees no CUDA device."""
    return choose_triton_mode()[0]


def numba_simulated() -> bool:
    """Choose Numba's CUDA mode (if nothing has imported ``numba.cuda`` yet) and say whether it is
    the simulator. Raises what importing ``numba.cuda`` raises when it cannot be imported."""
    choose_numba_simulator()
    importlib.import_module("numba.cuda")  # fixes the mode
    from numba.cuda.core import config

    return bool(config.ENABLE_CUDASIM)
