#!/usr/bin/env bash
# The device calls of this folder, from the repository root on a GPU (PART picks one):
#   PART=1: fingerprint, placements.py, then bench --repeat 3 of every built-in planner;
#   PART=2: the compiled corpus, memcheck, the isolated corpus of both GPU planners and the GPU
#           tests (run_evidence.sh steps), the evidence packed into $OUT/evidence/evidence.tgz.
#   OUT=/path PART=1 bash reports/gpu/2026-12-06-c/run.sh
set -uo pipefail
cd "$(dirname "$0")/../../.."
OUT="${OUT:-/tmp/placements-out}"
mkdir -p "$OUT"
if [ "${PART:-1}" = 1 ]; then
  python3 -c 'from conformance.fingerprint import fingerprint_text; print(fingerprint_text())' \
    > "$OUT/fingerprint.txt" 2>&1; nvidia-smi -L >> "$OUT/fingerprint.txt"
  timeout 200 python3 reports/gpu/2026-12-06-c/placements.py > "$OUT/placements.txt" 2>&1
  echo "exit code: $?" >> "$OUT/placements.txt"
  grep -v "Warning\|warn(" "$OUT/placements.txt" | tail -n 40
  timeout 300 python3 -m conformance bench --planner python --planner triton --planner numba-cuda \
    --planner triton-bound --planner numba-cuda-bound --repeat 3 --json "$OUT/bench.json" \
    --report "$OUT/bench.md" > "$OUT/bench.txt" 2>&1
  echo "exit code: $?" >> "$OUT/bench.txt"
  gzip -f "$OUT/bench.json"
  grep -v "^SKIPPED" "$OUT/bench.txt" | tail -n 40
else
  timeout 150 python3 -m pytest conformance/ -q -p no:cacheprovider --planner triton \
    --planner numba-cuda --isolate > "$OUT/isolated.txt" 2>&1
  echo "exit code: $?" >> "$OUT/isolated.txt"
  tail -n 5 "$OUT/isolated.txt"
  STEPS="fingerprint corpus-builtins memcheck-builtins gpu-tests" TC=100 TM=150 TT=150 \
    OUT="$OUT/evidence" bash reports/gpu/run_evidence.sh
fi
