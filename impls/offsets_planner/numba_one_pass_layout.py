"""The signature and workspace of the candidate one-pass Numba CUDA kernels
(:mod:`impls.offsets_planner.numba_one_pass_kernel`, reached through
:mod:`impls.offsets_planner.numba_one_pass`).

``lookback`` and ``lookback-pid`` share a workspace (int64 [8 + 3 * 128]: word 0 is
``epoch << 16 | tickets``, then flags (:data:`FLAGS`), verify totals (:data:`AGG_V`), write totals
(:data:`AGG_W`) per tile): thread 0 takes the tile by ticket (``atomic.add``, arrival order: every
earlier tile's block has started), the block that draws the last ticket adds
``(1 << 16) - gridDim.x`` (the epoch advances, the count returns to 0), each block publishes its
two totals and then a flag ``epoch + 1`` (``threadfence`` between), and spins on the flags of
earlier tiles with atomic reads. The workspace stays valid from launch to launch, also under
CUDA-graph replay, with no reset (:mod:`impls.offsets_planner.numba_one_pass`). ``lookback-pid``:
the tile is the block index and thread 0 takes the ticket (for the epoch only) after the block's
table gathers are issued, so no round trip precedes the inputs; it relies on the whole grid being
resident at once (at most 128 blocks), which CUDA does not promise; the bounded spin
(:data:`SPIN_LIMIT`) makes a violation wrong outputs, not a hang. ``lookback-packed`` has its own
ticket/epoch word (:data:`PACKED`) and two sets of self-flagged words after it (:data:`SET_WORDS`
each): :data:`WORKSPACE_LEN` int64 words in all.
"""

from __future__ import annotations

SIGNATURE = ("void(int64[::1], int64[::1], int64[::1], int32[:, ::1], int64[::1], int64[::1], "
             "int64[::1], int64[::1], int32[::1], int32[::1], int32[::1], int64[::1], int64, "
             "int64, int64, int64, int64)")
"""The signature of the candidate kernels: rpi, prefix, extend, the 2-D table, lut,
the six outputs, a workspace (int64, read only by the look-back designs), then bs, lut_len, W,
verify_capacity and chunk (requests per block). (The planner's kernels take
:data:`impls.offsets_planner.numba_cuda_kernel.ARRAY_SIGNATURE`: a flat table and its shape.)"""

FLAGS, AGG_V, AGG_W, MAX_BLOCKS = 8, 8 + 128, 8 + 256, 128
PACKED = 8 + 3 * MAX_BLOCKS
"""``lookback-packed``'s own ticket/epoch word (its parity must advance only with its own
launches), then its two sets of 128 x 4 words from ``PACKED + 8``."""
SET_WORDS = 4 * MAX_BLOCKS
WORKSPACE_LEN = PACKED + 8 + 2 * SET_WORDS
SPIN_LIMIT = 1 << 12
"""Most polls of one flag before a look-back block gives up (wrong outputs, which a check sees,
instead of a hang): 4096 polls of about 1 us, against the few us an earlier block takes to
publish."""
