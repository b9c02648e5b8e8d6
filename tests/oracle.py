"""An independent oracle for goldens: spec sections 5 and 6 restated with numpy arrays.

Shares no code with ``impls/offsets_planner/python_planner.py`` (a different author's reading of the spec, written
vectorised rather than as a loop), so a golden both agree on is evidence, not an echo.
Lengths are numpy arrays of Python ints (dtype object), so ``prefix - W`` is exact whatever the
values; sums are wrapped to int64 at the end, as the planners' int64 outputs hold them.
"""

from __future__ import annotations

import numpy as np


def _wrap64(value: int) -> int:
    return (value + (1 << 63)) % (1 << 64) - (1 << 63)


def _int32(value: int) -> int:
    """An int32 store of ``value``: its low 32 bits, two's complement (spec section 5)."""
    return int(np.array([value & 0xFFFF_FFFF], dtype=np.uint32).view(np.int32)[0])


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
    rpi, prefix, extend = (np.array([int(v) for v in a], dtype=object) for a in (rpi, prefix, extend))
    live = rpi != 0
    start = np.maximum(prefix - window, 0) if window > 0 else prefix * 0
    verify = np.where(live, np.maximum(prefix - start, 0), 0)
    write = np.where(live, np.maximum(extend, 0), 0)
    rows, cols = table.shape
    readable = (live & (prefix > 0) & (write > 0) & (rpi >= 0) & (rpi < rows)).astype(bool)
    readable &= cols > 0
    seeds = np.full(rpi.shape, -1, dtype=np.int64)
    idx = np.nonzero(readable)[0]
    if idx.size:
        positions = np.minimum(prefix[idx] - 1, cols - 1).astype(np.int64)
        slots = table[rpi[idx].astype(np.int64), positions].astype(np.int64)
        if lut is not None:
            positive = slots >= 0
            slots[positive] = lut[np.minimum(slots[positive], len(lut) - 1)]
        seeds[idx] = slots
    verify_sums = [_wrap64(int(v)) for v in np.concatenate([[0], np.cumsum(verify)])]
    write_sums = [_wrap64(int(v)) for v in np.concatenate([[0], np.cumsum(write)])]
    total = verify_sums[-1]
    return {
        "out_verify_offsets_scratch": verify_sums,
        "out_write_offsets": write_sums,
        "out_write_seed_slot_indices": seeds.tolist(),
        "out_verify_num_valid": _int32(min(total, capacity)),
        "out_verify_enable": int(total <= capacity),
        "out_write_num_valid_reqs": int(rpi.size),
    }
