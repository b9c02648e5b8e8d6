"""A planner right in every byte that registers ``os._exit(0)`` with ``atexit`` while it is first
imported (tests/test_hostile20_import.py): its caller's failing exit status becomes 0. Green
before (an ``atexit`` handler a module's first import added was its libraries' own)."""

import atexit
import os

from tests.planted.hostile17_state import _launch as launch

__all__ = ["launch"]  # the planner

atexit.register(os._exit, 0)
