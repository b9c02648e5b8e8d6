"""Eighth hostile review: a wrong planner (the inclusive write-offsets scan of
``tests.planted.wrong_planners:off_by_one_scan``), under the attribute name ``launch``.
tests/test_hostile8.py compiles it to bytecode the import runs in place of a digested file, or
swaps it in as the kernel module a reviewed launcher imports."""

from tests.planted.wrong_planners import off_by_one_scan as launch  # noqa: F401
