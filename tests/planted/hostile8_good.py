"""Eighth hostile review: a correct planner (the built-in Python planner under another name).
tests/test_hostile8.py copies it into an entrant's folder as the file the harness reads (and
digests) while the import runs other code, or as a kernel module a launcher imports."""

from impls.offsets_planner.python_planner import launch  # noqa: F401
