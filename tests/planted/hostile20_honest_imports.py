"""An honest planner (tests/test_hostile20_import.py) whose module, when first imported, does what
a Triton or Numba planner's does: imports Triton and ``numba.cuda`` (each where installed, in the
mode :mod:`impls.kernel_modes` chooses), ``multiprocessing`` and makes a logger. Its run must stay
green: the isolation worker imports these libraries before it reads any state."""

import importlib
import importlib.util
import logging
import multiprocessing

from impls.kernel_modes import choose_numba_simulator, choose_triton_mode
from tests.planted.hostile17_state import _launch as launch

__all__ = ["launch"]  # the planner
LOG = logging.getLogger(__name__)
choose_triton_mode()
choose_numba_simulator()
LIBRARIES = [multiprocessing, *(importlib.import_module(name) for name in ("triton", "numba.cuda")
                                if importlib.util.find_spec(name.partition(".")[0]))]
