"""How the bench's own kernels (the floors) run where there is no CUDA device: the choice every
subject's Triton and Numba planners make when they are imported (:mod:`impls.kernel_modes`), made
here before a floor kernel is defined, so that it runs as the planners do (and a planner imported
after it finds the variable it would have set itself).

* :func:`prepare_triton`: before a module decorates a ``@triton.jit`` kernel;
* :func:`numba_simulated`: before anything imports ``numba.cuda``; says whether it is the simulator;
* :func:`watch_kernels`: the kernel names and the kernel objects of a floor's module on the
  bench's watch list (its last statement), with the instance attributes each framework rebinds
  itself (:data:`TRITON_REBOUND`, :data:`NUMBA_REBOUND`) left out of the state check.
"""

from __future__ import annotations

import importlib

from conformance.bench import clocks
from impls.kernel_modes import choose_numba_simulator, choose_triton_mode

TRITON_REBOUND = frozenset({"hash", "used_global_vals", "binder", "CompiledKernel", "compile",
                            "ASTSource", "make_backend", "constexpr_indices",
                            "non_constexpr_indices", "specialised_indices"})
"""Instance attributes of a Triton ``JITFunction`` that Triton itself sets or rebinds on the
kernel's first compile or launch (``cache_key`` sets ``hash`` and ``used_global_vals``;
``create_binder`` the compiler entry points, and before Triton 3.3 ``binder`` and the index lists,
read from triton/runtime/jit.py): not compared by the state check, whose snapshot is taken at
import, before the first launch."""
NUMBA_REBOUND = frozenset({"grid_dim", "block_dim", "stream", "dynshared_size",
                           "_launch_config_sensitive", "_launch_config_default_key", "_cache"})
"""Instance attributes of a Numba kernel that Numba itself rebinds when it launches: the
simulator's ``FakeCUDAKernel.__getitem__`` stores the launch configuration on the kernel; a
``CUDADispatcher`` records whether its kernels depend on the launch configuration and may drop its
disk cache (numba_cuda/numba/cuda/dispatcher.py)."""


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


def watch_kernels(module, rebound: frozenset, *names: str) -> None:
    """Put ``module``'s kernels ``names`` on the bench's watch list: each name
    (:func:`conformance.bench.clocks.watch`: a kernel rebound) and each kernel object's own state
    (:func:`conformance.bench.clocks.watch_state`, ``rebound`` left out: a pre-run hook added, an
    instance attribute such as ``run`` set, its class's methods rebound)."""
    clocks.watch(module, *names)
    for name in names:
        clocks.watch_state(f"{module.__name__}.{name}", getattr(module, name), rebound)
