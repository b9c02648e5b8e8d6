"""Planners of "another repository", for the installed-wheel test (``tests/test_installed_wheel.py``).

The test copies this file, as ``mykernels.py``, into a folder outside the checkout and runs the
corpus on it from there with only the built wheel installed: it imports nothing but torch and the
wheel's :mod:`impls` (the pure-Python planner, the reference of spec section 5).

* :func:`launch` is a correct planner (it is the pure-Python one): every case passes.
* :func:`launch_wrong_write_offsets` plans correctly, then adds 1 to ``out_write_offsets[1]``
  whenever a batch has a row: every case with a live batch must fail on that element.
"""

from __future__ import annotations

from impls.offsets_planner.python_planner import launch as _python_launch


def launch(**kwargs) -> None:
    """The pure-Python planner, called through this module (spec section 3's launcher)."""
    _python_launch(**kwargs)


def launch_wrong_write_offsets(**kwargs) -> None:
    """The pure-Python planner with one planted bug: ``out_write_offsets[1]`` one too large when
    the batch has a row (spec section 5: ``write_offsets`` is the exclusive prefix sum of
    ``extend_seq_lens``, so ``write_offsets[1] == extend_seq_lens[0]``)."""
    _python_launch(**kwargs)
    if kwargs["req_pool_indices"].numel() > 0:
        kwargs["out_write_offsets"][1] += 1
