"""An honest planner (tests/test_hostile20_import.py) whose module imports a library that registers
an ``atexit`` handler when first imported (tests/planted/hostile20_library_at_exit.py): its first
case fails unless ``CONFORMANCE_IMPORT_FIRST`` names that library, vouching for it."""

import tests.planted.hostile20_library_at_exit  # noqa: F401 - its import is what is judged
from tests.planted.hostile17_state import _launch as launch

__all__ = ["launch"]  # the planner
