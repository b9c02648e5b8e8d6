#!/usr/bin/env bash
# The device call of this folder: the sweep (shots.py), then each planner's flags set as it decided
# (the same edit is committed with this folder), then the evidence of that tree: bench --repeat 3,
# the compiled corpus and memcheck (STEPS_EV names other run_evidence.sh steps instead).
#   OUT=/path bash reports/gpu/2026-12-05-d/run.sh        # from the repository root, on a GPU
set -uo pipefail
cd "$(dirname "$0")/../../.."
OUT="${OUT:-/tmp/shots-out}"
mkdir -p "$OUT"
if [ -z "${SKIP_SWEEP:-}" ]; then  # SKIP_SWEEP=1: the evidence of the tree alone
  timeout 240 python3 reports/gpu/2026-12-05-d/shots.py > "$OUT/shots.txt" 2>&1
  echo "exit code: $?" >> "$OUT/shots.txt"
fi
[ -f "$OUT/shots.txt" ] && grep -v NumbaPerformanceWarning "$OUT/shots.txt" | grep -v "warn(errors" | tail -n 40
decision="$(grep -s '^DECISION' "$OUT/shots.txt" || echo 'DECISION none')"
case "$decision" in *triton=tagged*)
  sed -i 's/^TAGGED: bool = False$/TAGGED: bool = True/' impls/offsets_planner/triton_planner.py ;; esac
case "$decision" in *triton=late_shot*|*triton=tagged+late_shot*)
  sed -i 's/^LATE_SHOT: bool = False$/LATE_SHOT: bool = True/' impls/offsets_planner/triton_planner.py ;; esac
case "$decision" in *numba-cuda=1*)
  sed -i 's/^PRE_POLL = False$/PRE_POLL = True/' impls/offsets_planner/numba_cuda_planner.py ;; esac
grep -n "^TAGGED\|^LATE_SHOT\|^PRE_POLL" impls/offsets_planner/triton_planner.py impls/offsets_planner/numba_cuda_planner.py \
  | tee "$OUT/flags.txt"
sha256sum impls/offsets_planner/*.py >> "$OUT/flags.txt"
mkdir -p "$OUT/bench"
timeout 220 python3 -m conformance bench --planner python --planner triton --planner numba-cuda \
  --planner triton-bound --planner numba-cuda-bound --repeat 3 --json "$OUT/bench/bench.json" \
  --report "$OUT/bench/bench.md" > "$OUT/bench/bench.txt" 2>&1
echo "exit code: $?" >> "$OUT/bench/bench.txt"
grep -v "^SKIPPED" "$OUT/bench/bench.txt" | tail -n 60
STEPS="${STEPS_EV:-fingerprint corpus-builtins memcheck-builtins}" TC=100 TM=150 TT=130 \
  OUT="$OUT/evidence" bash reports/gpu/run_evidence.sh
