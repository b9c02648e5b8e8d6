"""Eighth hostile review: a thin launcher whose kernel lives in a sibling module of the
entrant's folder, ``h8kern`` (tests/test_hostile8.py lays out ``h8kern`` as a source file, or
as sourceless bytecode ``h8kern.pyc``)."""

from h8kern import launch  # noqa: F401
