"""Ninth hostile review: a thin launcher whose kernel ``h9kern`` lives in ANOTHER folder of
``CONFORMANCE_PLANNER_PATH`` (tests/test_hostile9.py lays out ``entrant/h9launch.py`` and
``lib/h9kern.py`` and names both folders)."""

from h9kern import launch  # noqa: F401
