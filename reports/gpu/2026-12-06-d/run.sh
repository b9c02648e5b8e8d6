#!/usr/bin/env bash
# The device call of this folder, from the repository root on a GPU: the fingerprint, the sweep
# (big_tiles.py); when its DECISION line names a config, the Triton planner's bs 2049-4096 row
# (impls/offsets_planner/triton_launch_design.py DESIGNS[4096]) set to it and the bench on three
# repeats of that tree; outputs straight into $OUT.
#   OUT=/path bash reports/gpu/2026-12-06-d/run.sh
set -uo pipefail
cd "$(dirname "$0")/../../.."
OUT="${OUT:-/tmp/big-tiles-out}"
mkdir -p "$OUT"
python3 -c 'from conformance.fingerprint import fingerprint_text; print(fingerprint_text())' \
  > "$OUT/fingerprint.txt" 2>&1; nvidia-smi -L >> "$OUT/fingerprint.txt"
timeout 240 python3 reports/gpu/2026-12-06-d/big_tiles.py > "$OUT/big_tiles.txt" 2>&1
echo "exit code: $?" >> "$OUT/big_tiles.txt"
grep -v "Warning\|warn(" "$OUT/big_tiles.txt" | tail -n 60
decision="$(grep -s '^DECISION' "$OUT/big_tiles.txt" || echo 'DECISION triton=none')"
cfg="${decision#DECISION triton=}"
if [ "$cfg" != none ] && [ -n "$cfg" ]; then
  IFS=, read -r seed scan warps <<< "$cfg"
  sed -i "s/4096: (\"roles-lookback\", 64, 512, 8)/4096: (\"roles-lookback\", $seed, $scan, $warps)/" \
    impls/offsets_planner/triton_launch_design.py
  grep -n '4096: ("roles-lookback"' impls/offsets_planner/triton_launch_design.py | tee "$OUT/design.txt"
  timeout 300 python3 -m conformance bench --planner python --planner triton --planner numba-cuda \
    --planner triton-bound --planner numba-cuda-bound --repeat 3 --json "$OUT/bench.json" \
    --report "$OUT/bench.md" > "$OUT/bench.txt" 2>&1
  echo "exit code: $?" >> "$OUT/bench.txt"
  gzip -f "$OUT/bench.json"
  grep -v "^SKIPPED" "$OUT/bench.txt" | tail -n 30
fi
