"""Ninth hostile review: a correct kernel (the built-in Python planner under another name)."""

from impls.offsets_planner.python_planner import launch  # noqa: F401
