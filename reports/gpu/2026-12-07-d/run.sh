#!/usr/bin/env bash
# The device call of this folder, from the repository root on a GPU, `build/` carried and
# `source build/dev_setup.sh` first:
#   1. bench --repeat 3 of every built-in planner, as committed (bench.md, bench.json.gz);
#   2. then, in this copy of the tree only, the Numba planner's bs 4096 row with chunks of 96
#      requests (../2026-12-07-c/: 3.49 against 3.54 us in one sweep), bench --repeat 3 of
#      numba-cuda and triton (chunk96.md; planner.diff shows the change).
#   OUT=/path bash reports/gpu/2026-12-07-d/run.sh
set -uo pipefail
cd "$(dirname "$0")/../../.."
OUT="${OUT:-/tmp/d-out}"
mkdir -p "$OUT"
python3 -c 'import torch; from conformance.fingerprint import fingerprint_text; print(fingerprint_text())' \
  > "$OUT/fingerprint.txt" 2>&1; nvidia-smi -L >> "$OUT/fingerprint.txt"
timeout 200 python3 -m conformance bench --planner python --planner triton --planner numba-cuda \
  --planner triton-bound --planner numba-cuda-bound --repeat 3 --json "$OUT/bench.json" \
  --report "$OUT/bench.md" > "$OUT/bench.txt" 2>&1
echo "exit code: $?" >> "$OUT/bench.txt"; tail -n 2 "$OUT/bench.txt"
gzip -f "$OUT/bench.json"; sed -n '5,17p' "$OUT/bench.md"
P=impls/offsets_planner/numba_cuda_planner.py
cp "$P" /tmp/planner.before
sed -i 's/(4096, ("warp-lookback", 32, 128, 0))/(4096, ("warp-lookback", 32, 96, 0))/' "$P"
diff -u /tmp/planner.before "$P" > "$OUT/planner.diff"
timeout 120 python3 -m conformance bench --planner triton --planner numba-cuda --repeat 3 \
  --report "$OUT/chunk96.md" > "$OUT/chunk96.txt" 2>&1
echo "exit code: $?" >> "$OUT/chunk96.txt"; tail -n 1 "$OUT/chunk96.txt"
cp /tmp/planner.before "$P"
grep -E "^\| \`(triton|numba-cuda) \[gpu\]\` +\| \`replay" "$OUT/bench.md" "$OUT/chunk96.md" | cut -c1-150
