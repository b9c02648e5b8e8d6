"""Planted planners of the twenty-fifth hostile review (tests/test_hostile25.py).

* :func:`flat_read_no_lut_clamp`: the pure-Python plan, with the seed of a request past its row
  read as upstream's kernel reads it (the flat table at ``row * max_seq_len + prefix - 1``),
  then translated through the LUT *without* any clamp: a slot at or past ``lut_len`` gives -7.
  It never clamps the LUT index; on a case where the flat slot lies inside the LUT, its value is
  upstream's all the same.
"""

from __future__ import annotations

from impls.offsets_planner.python_planner import launch as python_launch
from tests.planted.divergent_planners import past_row_requests


def flat_read_no_lut_clamp(**kwargs) -> None:
    python_launch(**kwargs)
    table, lut = kwargs["req_to_token"], kwargs["full_to_swa_index_mapping"]
    if table.dim() != 2 or lut is None or lut.dim() != 1:
        return
    rows, cols = table.shape
    seeds = kwargs["out_write_seed_slot_indices"]
    for r, row, prefix in past_row_requests(kwargs):
        flat = row * cols + prefix - 1
        if flat >= rows * cols:
            continue  # past the table: left as the project's clamp
        slot = int(table.reshape(-1)[flat])
        seeds[r] = slot if slot < 0 else int(lut[slot]) if slot < lut.numel() else -7


def exits_zero_with_a_lut(**kwargs) -> None:
    """The pure-Python plan, except that with a LUT its process ends at once with status 0
    (``os._exit(0)``): under ``fuzz --jobs`` it runs in a job's isolation worker, and a run must
    count that as a divergence (``crash:``), never exit 0."""
    if kwargs["full_to_swa_index_mapping"] is not None:
        import os

        os._exit(0)
    python_launch(**kwargs)
