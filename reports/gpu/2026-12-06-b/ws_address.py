"""Does where the look-back workspace lies decide the planners' replay time at bs 1024 and 4096?

In ``../2026-12-06-a/`` (one H200) the Numba planner's own launch at bs 4096 took 3.73 us while
the same kernel and shape launched by the sweep (``warp 128 base``, on a workspace of its own)
took 3.52, and the bench's three repeats of the planner spread 3.51..3.77 us. The look-back's
polls and atomics go to the workspace's L2 slice: this script gives each planner's own launch
(``numba_cuda_planner.launch``, ``triton_planner.launch``) a fresh zeroed workspace at several
offsets of one pool (its device-wide workspace swapped in before the buffer set's first launch,
which packs its pointer), and times every row in turn (``../2026-12-04-b/replay_rounds.py``: 9
rounds of 200 replays behind a sleep kernel; each candidate checked byte for byte against the
Numba planner before and after its replays). ``default`` is the planner's own workspace.

    python reports/gpu/2026-12-06-b/ws_address.py        # from the repository root, on a GPU
"""
import os
import sys

import torch

sys.path.insert(0, os.path.realpath(os.path.join(os.path.dirname(__file__), "..", "..", "..")))
from impls.offsets_planner import numba_roles_lookback_kernel as numba_ws  # noqa: E402
from impls.offsets_planner import triton_roles_lookback as triton_ws  # noqa: E402
from impls.offsets_planner.harness.sweeps import one_pass_calls as c  # noqa: E402

sys.path.insert(0, os.path.realpath(os.path.join(os.path.dirname(__file__), "..", "2026-12-04-b")))
import replay_rounds  # noqa: E402

dev = torch.device("cuda", 0)
OFFSETS_KIB = (0, 4, 64, 1024, 4096, 16388)
"""Where each row's workspace starts in the pool, KiB (int64 words: x 128)."""
POOL = torch.zeros((OFFSETS_KIB[-1] + 64) * 128 * 2, dtype=torch.int64, device=dev)
DEFAULT = {m: m.workspace(dev) for m in (numba_ws, triton_ws)}
"""Each planner's own device workspace, made before the pool's rows swap theirs in."""
print(f"pool at 0x{POOL.data_ptr():x}; defaults "
      + ", ".join(f"0x{w.data_ptr():x}" for w in DEFAULT.values()))


def own(row):
    """A ``current`` row of replay_rounds, its planner given back its own workspace first."""
    framework, label, make_current = row
    module = numba_ws if framework == "numba-cuda" else triton_ws

    def make(kw):
        module._WORKSPACES.by_device[str(dev)] = DEFAULT[module]
        return make_current(kw)
    return (framework, label, make) if label == "current" else row


def at(framework, offset_kib, slot):
    """A row: ``framework``'s planner launch with its workspace at ``offset_kib`` of the pool
    (``slot`` 0 / 1: the pool's first or second half, so no two rows share a workspace)."""
    module = numba_ws if framework == "numba-cuda" else triton_ws
    planner = c.current(framework)[2]

    def make(kw):
        start = slot * (OFFSETS_KIB[-1] + 64) * 128 + offset_kib * 128
        ws = POOL[start:start + module.WORKSPACE_LEN]
        ws.zero_()
        torch.cuda.synchronize()
        module._WORKSPACES.by_device[str(dev)] = ws
        return planner(kw)
    return (framework, f"ws +{offset_kib} KiB", make)


rows = {}
for slot, bs in enumerate((1024, 4096)):
    base = [own(row) for row in replay_rounds.floors_and_current()]
    rows[bs] = base + [at(fw, off, slot) for fw in ("triton", "numba-cuda") for off in OFFSETS_KIB]
MEDIANS: dict = {}
bad = replay_rounds.run(rows, dev, MEDIANS)
for bs in rows:
    for fw in ("triton", "numba-cuda"):
        got = [MEDIANS.get((bs, fw, f"ws +{o} KiB"), float("nan")) for o in OFFSETS_KIB]
        print(f"SPREAD bs {bs} {fw}: current {MEDIANS.get((bs, fw, 'current'), float('nan')):.2f}"
              f" us, workspace offsets {min(got):.2f}..{max(got):.2f} us")
sys.exit(1 if bad else 0)
