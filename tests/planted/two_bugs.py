"""A planner with two unrelated planted bugs, for ``tests/test_failure_groups.py``: the scans drop
the carry between blocks of 1024 lanes (:mod:`tests.planted.mutants.scan`), and the contiguity
check's message has a typo (:mod:`tests.planted.mutants.validation`). Its failures are two
patterns: a value of ``out_verify_offsets_scratch`` on the large batches, a wrong error on the
contiguity cases."""

from __future__ import annotations

from tests.planted.mutants.base import launcher
from tests.planted.mutants.scan import _BlockCarryDropped
from tests.planted.mutants.validation import _MessageTypo


class _TwoBugs(_BlockCarryDropped, _MessageTypo):
    """Bugs: the scans drop the carry between blocks; the contiguity message has a typo."""


two_bugs = launcher(_TwoBugs)
