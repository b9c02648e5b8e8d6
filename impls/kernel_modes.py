"""How every subject's Triton and Numba CUDA planners choose their mode, written once: each
decision is made before the framework reads its variable (Triton when ``@triton.jit`` runs,
Numba once, when ``numba.cuda`` is first imported), so a kernel defined after the call runs in the
mode the planners run in. Imports nothing of the harness.

* :func:`choose_triton_mode`: ``TRITON_INTERPRET`` true: the interpreter; torch sees a CUDA
  device: compiled (``gpu``); set to anything else with no CUDA device: unavailable (the kernel
  cannot run); unset or empty with no CUDA device: set to ``1``, the interpreter.
* :func:`choose_numba_simulator`: ``NUMBA_ENABLE_CUDASIM`` unset, no CUDA device and
  ``numba.cuda`` not imported yet: set to ``1`` (Numba's CUDA simulator).
"""

from __future__ import annotations

import os
import sys

import torch

TRITON_ENV = "TRITON_INTERPRET"
NUMBA_ENV = "NUMBA_ENABLE_CUDASIM"


def truthy(value: str | None) -> bool:
    """Whether a mode variable's ``value`` turns its mode on (``1``, ``true``, ``on``, ``yes``,
    ``y``, any case, blanks around ignored), as Triton and Numba read theirs."""
    return value is not None and value.strip().lower() in ("1", "true", "on", "yes", "y")


def choose_triton_mode() -> tuple[str | None, str | None]:
    """(``interpreter`` or ``gpu``, None), or (None, why) when ``TRITON_INTERPRET`` forbids the
    interpreter and torch sees no CUDA device; sets ``TRITON_INTERPRET=1`` where it chooses the
    interpreter and the variable was unset or empty."""
    env = os.environ.get(TRITON_ENV)
    if truthy(env):
        return "interpreter", None
    if torch.cuda.is_available():
        return "gpu", None
    if env is not None and env.strip() != "":
        return None, f"{TRITON_ENV}={env!r} forbids the interpreter and torch sees no CUDA device"
    os.environ[TRITON_ENV] = "1"
    return "interpreter", None


def choose_numba_simulator() -> None:
    """Set ``NUMBA_ENABLE_CUDASIM=1`` when it is unset, torch sees no CUDA device and nothing has
    imported ``numba.cuda`` yet (Numba reads it then, once)."""
    if os.environ.get(NUMBA_ENV) is None and "numba.cuda" not in sys.modules \
            and not torch.cuda.is_available():
        os.environ[NUMBA_ENV] = "1"
