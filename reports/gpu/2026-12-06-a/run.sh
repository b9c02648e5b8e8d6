#!/usr/bin/env bash
# The device call of this folder: the sweep (shots.py), then each planner's flags set as it decided
# (Triton SCAN_TOTALS / ONE_READ, Numba LEAN_STEPS), then the evidence of that tree: bench
# --repeat 3, the compiled corpus and memcheck (STEPS_EV names other run_evidence.sh steps), and
# everything packed into $OUT/results.tar.gz.
#   OUT=/path bash reports/gpu/2026-12-06-a/run.sh        # from the repository root, on a GPU
set -uo pipefail
cd "$(dirname "$0")/../../.."
OUT="${OUT:-/tmp/shots-out}"
mkdir -p "$OUT"
if [ -z "${SKIP_SWEEP:-}" ]; then  # SKIP_SWEEP=1: the evidence of the tree alone
  timeout 300 python3 reports/gpu/2026-12-06-a/shots.py > "$OUT/shots.txt" 2>&1
  echo "exit code: $?" >> "$OUT/shots.txt"
fi
[ -f "$OUT/shots.txt" ] && grep -v NumbaPerformanceWarning "$OUT/shots.txt" | grep -v "warn(errors" | tail -n 60
decision="$(grep -s '^DECISION' "$OUT/shots.txt" || echo 'DECISION none')"
case "$decision" in *triton=scan_totals*)
  sed -i 's/^SCAN_TOTALS: bool = False$/SCAN_TOTALS: bool = True/' impls/offsets_planner/triton_planner.py ;; esac
case "$decision" in *triton=one_read*|*triton=scan_totals+one_read*)
  sed -i 's/^ONE_READ: bool = False$/ONE_READ: bool = True/' impls/offsets_planner/triton_planner.py ;; esac
case "$decision" in *numba-cuda=1*)
  sed -i 's/^LEAN_STEPS = False$/LEAN_STEPS = True/' impls/offsets_planner/numba_cuda_planner.py ;; esac
grep -n "^SCAN_TOTALS\|^ONE_READ\|^LEAN_STEPS" impls/offsets_planner/triton_planner.py \
  impls/offsets_planner/numba_cuda_planner.py | tee "$OUT/flags.txt"
sha256sum impls/offsets_planner/*.py >> "$OUT/flags.txt"
mkdir -p "$OUT/bench"
timeout 220 python3 -m conformance bench --planner python --planner triton --planner numba-cuda \
  --planner triton-bound --planner numba-cuda-bound --repeat 3 --json "$OUT/bench/bench.json" \
  --report "$OUT/bench/bench.md" > "$OUT/bench/bench.txt" 2>&1
echo "exit code: $?" >> "$OUT/bench/bench.txt"
grep -v "^SKIPPED" "$OUT/bench/bench.txt" | tail -n 60
STEPS="${STEPS_EV:-fingerprint corpus-builtins memcheck-builtins}" TC=100 TM=150 TT=130 \
  OUT="$OUT/evidence" bash reports/gpu/run_evidence.sh
(cd "$OUT" && tar czf results.tar.gz --exclude=results.tar.gz . && ls -l results.tar.gz)
