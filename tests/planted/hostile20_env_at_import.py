"""A planner right in every byte that sets ``PYTHONWARNINGS=error`` while it is first imported
(tests/test_hostile20_import.py): every Python process its caller starts later turns its first
warning into an error. Green before (a variable a module's first import added was its
libraries' own)."""

import os

from tests.planted.hostile17_state import _launch as launch

__all__ = ["launch"]  # the planner

os.environ["PYTHONWARNINGS"] = "error"
