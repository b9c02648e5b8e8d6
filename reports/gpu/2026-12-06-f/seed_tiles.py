"""Do the Triton planner's seed programs cost a replay their idle threads? The default launch at
bs 4096 runs 64 seed programs of 64 lanes in 256-thread blocks (the launch's one ``num_warps``,
8, serves the scan programs too), so three of every four seed threads hold no lane; the sweep of
``../2026-12-03-d/`` tried seed tiles of 32 and 64 lanes only. Here the same design
(``roles-lookback``, joined sides, early poll: the default planner's flags) with seed tiles of
64 to 512 lanes, at bs 1024, 2048 and 4096, each checked byte for byte against the current Numba
planner on the serving workload and two out-of-contract draws before and after its replays, and
replayed in turn with the chain floors and both current planners (``../2026-12-04-b/
replay_rounds.py``).

    python reports/gpu/2026-12-06-f/seed_tiles.py [--wider]   # from the repository root, on a GPU

``--wider``: seed tiles of 128 to 2048 lanes at bs 1536, 2560 and 4096.
"""
import os
import sys

import torch

ROOT = os.path.realpath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
sys.path.insert(0, ROOT)
from impls.offsets_planner.harness.sweeps import one_pass_calls as c  # noqa: E402

sys.path.insert(0, os.path.join(ROOT, "reports", "gpu", "2026-12-04-b"))
import replay_rounds  # noqa: E402

SCAN_TILE = {1024: 128, 2048: 128, 4096: 512}
TILES = (64, 128, 256, 512)
if "--wider" in sys.argv:  # the second sweep: wider seed tiles where 512 won, and bs between
    SCAN_TILE, TILES = {1536: 128, 2560: 512, 4096: 512}, (128, 256, 512, 1024, 2048)
"""The default planner's scan tile per bs (``DESIGNS``: 128 lanes in the 2048 bucket, 512 in the
4096 one), kept: only the seed tile moves."""

if __name__ == "__main__":
    dev = torch.device("cuda", 0)
    rows_by_bs = {}
    for bs, scan_tile in SCAN_TILE.items():
        rows = list(replay_rounds.floors_and_current())
        for tile in TILES:
            _label, text, make = c._triton_candidate("roles-lookback", tile=tile,
                                                     scan_tile=scan_tile, num_warps=8,
                                                     joined=True, early_poll=True)
            rows.append(("triton", f"seed tile {tile}", make))
        rows_by_bs[bs] = rows
    bad = replay_rounds.run(rows_by_bs, dev)
    print(f"candidate rows that differ: {bad}")
    sys.exit(1 if bad else 0)
