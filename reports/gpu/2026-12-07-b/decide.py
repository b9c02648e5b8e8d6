"""Reads the sweep's rows (``one_pass --json``) and prints the chunk of the fastest correct
coalesced ``warp-lookback`` config at bs 4096 when it beats the Numba planner's current launch
by more than ``MARGIN_US``; exit status 0 then, 1 when none does (the planner stays as it is)."""

import json
import sys

MARGIN_US = 0.03
rows = [r for r in json.load(open(sys.argv[1])) if r["framework"] == "numba-cuda"
        and r["bs"] == 4096 and r["p50"] is not None]
current = next(r for r in rows if r["kernel"] == "current planner")
coalesced = [r for r in rows if r["kernel"] == "one-pass warp-lookback" and r["check"] == "same"
             and "coalesced True" in r["config"]]
best = min(coalesced, key=lambda r: r["p50"], default=None)
print(f"current planner {current['p50']:.3f} us; best coalesced "
      f"{best and best['config']} {best and round(best['p50'], 3)} us", file=sys.stderr)
if best is None or best["p50"] > current["p50"] - MARGIN_US:
    sys.exit(1)
print(dict(part.split(" ") for part in best["config"].split(", "))["chunk"])
