"""The kernel frameworks' first compile and launch in a process, done by the isolation worker
before it reads any state: what a framework does the first time it compiles and launches a kernel
is its own, as what it does at import is (:mod:`conformance.robustness.first_import`).

On a GPU the worker's first case is the first to compile a kernel in its process (the worker never
probes: a probe runs planner code). A framework's first compile and launch load and set up native
libraries (Numba's NVVM and its driver binding, which also makes its driver logger; Triton's
LLVM, which installs a crash handler for every signal of its ``KillSigs`` list): state the
harness reads. The ``numba-cuda`` planner then failed every isolated case on an H100, right in
every byte, each case in a fresh worker after the last one's "change"
(``reports/gpu/2026-12-06-h/``: the run was stopped at its time limit before it printed which
reading moved; with this module no case fails, and the sanitized workers are the same workers).
:func:`exercise` compiles and launches one trivial kernel of each installed framework in its
compiled mode, in the worker, before the worker says it is ready: the harness's first reading,
inside (:mod:`conformance.robustness.torch_state`) and outside (:mod:`~conformance.robustness.
outside_view`), comes after it. A planner's own first call is read as before: what it changes
beyond what the frameworks' first use did is a change of its case.

Nothing runs in the CPU modes (Triton's interpreter, Numba's simulator run in Python and load no
native compiler; the CPU runs have passed without it) or where torch sees no CUDA device.
"""

from __future__ import annotations

import os

from impls.kernel_modes import NUMBA_ENV, TRITON_ENV, truthy

RAN: list[str] = []
"""The frameworks :func:`exercise` compiled and launched a kernel of, in this process."""


def _triton(x) -> None:
    import triton
    import triton.language as tl

    @triton.jit
    def one(out_ptr):
        tl.store(out_ptr, tl.load(out_ptr) + 1)

    one[(1,)](x)


def _numba(x) -> None:
    import torch
    from numba import cuda

    @cuda.jit
    def one(out):
        out[0] += 1

    stream = cuda.external_stream(torch.cuda.current_stream().cuda_stream)
    one[1, 1, stream](cuda.as_cuda_array(x, sync=False))


def exercise() -> list[str]:
    """Compile and launch one kernel of Triton and of Numba CUDA (each where installed and in its
    compiled mode: ``TRITON_INTERPRET`` and ``NUMBA_ENABLE_CUDASIM`` not true) on torch's current
    CUDA device and stream, then synchronise; each adds 1 to a one-element int64 tensor of its own
    and is checked to have done so. Nothing where torch sees no CUDA device. A framework that
    fails is skipped (the planner's own call reports a broken install).

    Returns:
        the names of the frameworks that ran (``["triton", "numba.cuda"]`` on a GPU host with both).
    """
    import torch

    if not torch.cuda.is_available():
        return []
    ran = []
    for name, mode, run in (("triton", TRITON_ENV, _triton), ("numba.cuda", NUMBA_ENV, _numba)):
        if truthy(os.environ.get(mode)):
            continue
        try:
            x = torch.zeros(1, dtype=torch.int64, device="cuda")
            run(x)
            torch.cuda.synchronize()
            if int(x.item()) != 1:
                continue
        except Exception:  # noqa: BLE001 - not installed or broken: the planner's call reports it
            continue
        ran.append(name)
    RAN[:] = ran
    return ran
