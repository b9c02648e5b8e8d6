"""Planners for the report's tests (``tests/test_report.py``) and its screenshot.

* :func:`configurable`: the pure-Python planner with the bugs named in ``REPORT_TEST_BUG``
  (comma-separated): ``scan`` (:func:`tests.planted.wrong_planners.off_by_one_scan`), ``message``
  (:func:`tests.planted.wrong_planners.wrong_error_message`), ``exit-bs3`` (the process exits on the
  first batch of three, as a crash ends a run), ``exit-padding`` (exits on a batch of three with
  a padding row). The same planner name can so fail different cases in two runs. The exits call
  libc's ``_exit(3)``, which the harness's in-process guard (it turns ``os._exit`` into a failure
  of the case) cannot intercept, as a real crash is not intercepted.
* :func:`seed_plus_one`: one bug, a seed one too large on a valid request (an error table all
  green, failures in the valid steps of error cases).
* :func:`enable_at_capacity`: one bug, ``>=`` for ``>``: the verify plan is disabled when the
  total equals the capacity exactly (spec §5 keeps it enabled).
"""

from __future__ import annotations

import ctypes
import os

from impls.offsets_planner.python_planner import launch as python_launch
from tests.planted import wrong_planners


def configurable(**kwargs) -> None:
    """The pure-Python planner, or the bug named by ``REPORT_TEST_BUG``."""
    bugs = set(os.environ.get("REPORT_TEST_BUG", "").split(","))
    rows = kwargs["req_pool_indices"]
    if len(rows) == 3 and ("exit-bs3" in bugs or ("exit-padding" in bugs and 0 in rows.tolist())):
        ctypes.CDLL(None)._exit(3)
    if "scan" in bugs:
        return wrong_planners.off_by_one_scan(**kwargs)
    if "message" in bugs:
        return wrong_planners.wrong_error_message(**kwargs)
    return python_launch(**kwargs)


def enable_at_capacity(**kwargs) -> None:
    """Bug: ``out_verify_enable`` is 0 when the verify total equals ``verify_capacity``."""
    python_launch(**kwargs)
    total = int(kwargs["out_verify_offsets_scratch"][kwargs["req_pool_indices"].shape[0]])
    if total == kwargs["verify_capacity"]:
        kwargs["out_verify_enable"].fill_(0)


def seed_plus_one(**kwargs) -> None:
    """One bug, in valid requests only: the seed of the first request that reads one (a live row,
    ``0 < prefix_lens <= max_seq_len``, ``extend_seq_lens > 0``) is one more than its table (or
    LUT) entry. Every documented error is raised exactly as the pure-Python planner raises it (the
    bug is after validation), so the report's error table must be all green for it, while the
    valid steps of ``err-steps-*-between-valid`` cases fail."""
    python_launch(**kwargs)
    table = kwargs["req_to_token"]
    cols = table.shape[1] if table.dim() == 2 else 0
    triples = zip(kwargs["req_pool_indices"].tolist(), kwargs["prefix_lens"].tolist(),
                  kwargs["extend_seq_lens"].tolist())
    for r, (row, prefix, extend) in enumerate(triples):
        if 0 < row < table.shape[0] and 0 < prefix <= cols and extend > 0:
            kwargs["out_write_seed_slot_indices"][r] += 1
            return
