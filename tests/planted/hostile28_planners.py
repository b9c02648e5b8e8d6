"""Planners of the twenty-eighth hostile review (tests/test_hostile28.py)."""

from __future__ import annotations

import threading
import time

from impls.offsets_planner.python_planner import launch as python_launch

_OUTS = ("out_verify_offsets_scratch", "out_write_offsets", "out_write_seed_slot_indices",
         "out_verify_num_valid", "out_verify_enable", "out_write_num_valid_reqs")


def writes_after_returning(**kwargs) -> None:
    """Returns with every output untouched; a daemon thread writes the right plan (computed on
    copies) a millisecond after the call returned: in a server the caller reads the plan at once,
    before the thread ran."""
    copies = {k: (v.clone() if k in _OUTS else v) for k, v in kwargs.items()}
    python_launch(**copies)  # raises a documented error where the step must (nothing written)
    targets = {k: kwargs[k] for k in _OUTS}

    def later() -> None:
        time.sleep(0.001)
        for name, out in targets.items():
            out.copy_(copies[name])

    threading.Thread(target=later, daemon=True).start()


def tile_of_8_past_bs(**kwargs) -> None:
    """The right plan, but from bs 8 up (a vector path) the seeds and write offsets are stored in
    whole tiles of 8 lanes: the lanes past bs (up to the capacity) get -1 and the total, where
    spec section 5 says nothing else is written. The corpus's valid steps with bs >= 8 all had
    buffers of exactly bs, so no tile lane past bs existed there."""
    python_launch(**kwargs)
    bs = kwargs["req_pool_indices"].numel()
    seeds, offsets = kwargs["out_write_seed_slot_indices"], kwargs["out_write_offsets"]
    if bs < 8:
        return
    end = min(-(-bs // 8) * 8, seeds.numel())
    seeds[bs:end] = -1
    offsets[bs + 1:end + 1] = offsets[bs].item()
