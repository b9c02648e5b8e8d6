"""A planner right in every byte that sets ``HOSTILE20_FROM_C`` with libc's ``setenv`` while it is
first imported (tests/test_hostile20_import.py): ``os.environ`` does not show it, every process
its caller starts has it. Green before."""

import ctypes

from tests.planted.hostile17_state import _launch as launch

__all__ = ["launch"]  # the planner

ctypes.CDLL(None).setenv(b"HOSTILE20_FROM_C", b"1", 1)
