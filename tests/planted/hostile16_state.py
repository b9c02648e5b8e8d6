"""Planted planners of the sixteenth hostile review (tests/test_hostile16.py): each computes the
pure-Python planner's plan, right in every byte, and leaves its caller's process changed in a way
conformance/robustness/process_state.py did not read before that review.

* :func:`clears_umask`: ``os.umask(0)``: every file its server creates after the call is writable
  by every user of the machine.
* :func:`lowers_open_file_limit`: the soft ``RLIMIT_NOFILE`` lowered to 256: its server's next
  sockets and files fail with "Too many open files".
* :func:`draws_from_random` and :func:`draws_from_numpy`: one draw from Python's ``random`` or
  numpy's global generator: a server that seeded it for a reproducible sample gets another
  sequence.
* :func:`rebinds_round`: ``builtins.round`` bound to a function that truncates: every later
  ``round`` of every module of its process.
"""

from __future__ import annotations

import builtins
import math
import os
import random
import resource

import numpy

from impls.offsets_planner.python_planner import launch as _launch


def clears_umask(**kwargs):
    """The right plan; then the umask is 0."""
    _launch(**kwargs)
    os.umask(0)


def lowers_open_file_limit(**kwargs):
    """The right plan; then at most 256 open files (the hard limit unchanged)."""
    _launch(**kwargs)
    resource.setrlimit(resource.RLIMIT_NOFILE, (256, resource.getrlimit(resource.RLIMIT_NOFILE)[1]))


def draws_from_random(**kwargs):
    """The right plan; then one draw from ``random``'s global generator."""
    _launch(**kwargs)
    random.random()


def draws_from_numpy(**kwargs):
    """The right plan; then one draw from numpy's global generator."""
    _launch(**kwargs)
    numpy.random.random_sample()


def _truncating_round(number, ndigits=None):
    return math.trunc(number) if ndigits is None else math.trunc(number * 10 ** ndigits) / 10 ** ndigits


def rebinds_round(**kwargs):
    """The right plan; then ``builtins.round`` truncates (``round(2.6) == 2``)."""
    _launch(**kwargs)
    builtins.round = _truncating_round
