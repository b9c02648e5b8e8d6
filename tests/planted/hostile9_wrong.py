"""Ninth hostile review: a wrong kernel (the inclusive write-offsets scan of
``tests.planted.wrong_planners:off_by_one_scan``) under the name ``launch``."""

from tests.planted.wrong_planners import off_by_one_scan as launch  # noqa: F401
