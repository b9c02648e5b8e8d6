#!/usr/bin/env bash
# The device call of this folder: the epoch_load sweep (epoch.py), then each planner's EPOCH_LOAD
# set as it decided (the same edit is committed with this folder), then the evidence of that tree:
# bench --repeat 3 first, then the compiled corpus, memcheck and the GPU tests.
#   OUT=/path bash reports/gpu/2026-12-05-b/run.sh        # from the repository root, on a GPU
set -uo pipefail
cd "$(dirname "$0")/../../.."
OUT="${OUT:-/tmp/epoch-out}"
mkdir -p "$OUT"
if [ -z "${SKIP_SWEEP:-}" ]; then  # SKIP_SWEEP=1: the evidence of the tree alone
  timeout 200 python3 reports/gpu/2026-12-05-b/epoch.py > "$OUT/epoch.txt" 2>&1
  echo "exit code: $?" >> "$OUT/epoch.txt"
fi
[ -f "$OUT/epoch.txt" ] && grep -v NumbaPerformanceWarning "$OUT/epoch.txt" | grep -v "warn(errors" | tail -n 30
decision="$(grep -s '^DECISION' "$OUT/epoch.txt" || echo 'DECISION none')"
case "$decision" in *triton=1*)
  sed -i 's/^EPOCH_LOAD: bool = False$/EPOCH_LOAD: bool = True/' impls/offsets_planner/triton_planner.py ;; esac
case "$decision" in *numba-cuda=1*)
  sed -i 's/^EPOCH_LOAD = False$/EPOCH_LOAD = True/' impls/offsets_planner/numba_cuda_planner.py ;; esac
grep -n "^EPOCH_LOAD" impls/offsets_planner/triton_planner.py impls/offsets_planner/numba_cuda_planner.py \
  | tee "$OUT/epoch-flags.txt"
sha256sum impls/offsets_planner/*.py >> "$OUT/epoch-flags.txt"
mkdir -p "$OUT/bench"
timeout 220 python3 -m conformance bench --planner python --planner triton --planner numba-cuda \
  --planner triton-bound --planner numba-cuda-bound --repeat 3 --json "$OUT/bench/bench.json" \
  --report "$OUT/bench/bench.md" > "$OUT/bench/bench.txt" 2>&1
echo "exit code: $?" >> "$OUT/bench/bench.txt"
grep -v "^SKIPPED" "$OUT/bench/bench.txt" | tail -n 60
STEPS="fingerprint corpus-builtins memcheck-builtins gpu-tests" TC=100 TM=150 TT=130 \
  OUT="$OUT/evidence" bash reports/gpu/run_evidence.sh
