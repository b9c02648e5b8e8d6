"""An independent oracle for goldens: spec sections 5 and 6 restated with numpy arrays.

Shares no code with ``impls/python_planner.py`` (a different author's reading of the spec, written
vectorised rather than as a loop), so a golden both agree on is evidence, not an echo.
Works on int64 numpy arrays with exact values (the corpus keeps them within int64).
"""

from __future__ import annotations

import numpy as np


def oracle(rpi, prefix, extend, table: np.ndarray, lut: np.ndarray | None, window: int,
           capacity: int) -> dict:
    """Expected defined regions (spec §5) for one launch.

    Args:
        rpi, prefix, extend: int sequences of length bs.
        table: int32/int64 [max_reqs, max_seq_len].
        lut: int64 [lut_len] or None.

    Returns:
        A dict keyed like a case's ``expect``.
    """
    rpi, prefix, extend = (np.asarray(a, dtype=np.int64).reshape(-1) for a in (rpi, prefix, extend))
    live = rpi != 0
    start = np.maximum(prefix - window, 0) if window > 0 else np.zeros_like(prefix)
    verify = np.where(live, np.clip(prefix - start, 0, None), 0)
    write = np.where(live, np.clip(extend, 0, None), 0)
    rows, cols = table.shape
    readable = live & (prefix > 0) & (write > 0) & (rpi >= 0) & (rpi < rows) & (cols > 0)
    seeds = np.full(rpi.shape, -1, dtype=np.int64)
    idx = np.nonzero(readable)[0]
    if idx.size:
        slots = table[rpi[idx], np.minimum(prefix[idx] - 1, cols - 1)].astype(np.int64)
        if lut is not None:
            positive = slots >= 0
            slots[positive] = lut[np.minimum(slots[positive], len(lut) - 1)]
        seeds[idx] = slots
    verify_sums = np.concatenate([[0], np.cumsum(verify)]).astype(np.int64)
    write_sums = np.concatenate([[0], np.cumsum(write)]).astype(np.int64)
    total = int(verify_sums[-1])
    return {
        "out_verify_offsets_scratch": verify_sums.tolist(),
        "out_write_offsets": write_sums.tolist(),
        "out_write_seed_slot_indices": seeds.tolist(),
        "out_verify_num_valid": min(total, capacity),
        "out_verify_enable": int(total <= capacity),
        "out_write_num_valid_reqs": int(rpi.size),
    }
