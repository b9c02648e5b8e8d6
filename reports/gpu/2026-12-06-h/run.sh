#!/usr/bin/env bash
# The device calls of this folder, from the repository root on a GPU, `build/` carried and
# `source build/dev_setup.sh` first (PART picks one):
#   PART=5: ../2026-12-06-g/raw_cluster.py --only-4096 (what the CTA's scan costs: each warp's
#           scan only, no scan at all);
#   PART=1: tests/test_first_use.py; the isolated corpus of both GPU planners; memcheck; the
#           attack tests (-v), hostile reviews 19 and 20 (process state, the planner module's
#           first import) among them;
#   PART=2: the compiled corpus and the GPU tests (run_evidence.sh steps), the Triton planner
#           judged as an external planner (never probed);
#   PART=3: bench --repeat 3 of every built-in planner.
#   OUT=/path PART=1 bash reports/gpu/2026-12-06-h/run.sh
set -uo pipefail
cd "$(dirname "$0")/../../.."
OUT="${OUT:-/tmp/h-out}"
mkdir -p "$OUT"
python3 -c 'import torch; from conformance.fingerprint import fingerprint_text; print(fingerprint_text())' \
  > "$OUT/fingerprint.txt" 2>&1; nvidia-smi -L >> "$OUT/fingerprint.txt"
note() { echo "exit code: $2" >> "$OUT/$1"; grep -a -v "Warning\|warn(" "$OUT/$1" | tail -n "${3:-3}"; }
if [ "${PART:-1}" = 5 ]; then  # ran first, on the tree before first_use.py
  timeout 100 python3 reports/gpu/2026-12-06-g/raw_cluster.py --only-4096 > "$OUT/raw_scan_cost.txt" 2>&1
  note raw_scan_cost.txt $? 30
elif [ "${PART:-1}" = 1 ]; then
  timeout 90 python3 -m pytest -v -p no:cacheprovider tests/test_first_use.py > "$OUT/first-use.txt" 2>&1
  note first-use.txt $? 12
  timeout 110 python3 -m pytest conformance/ -q -p no:cacheprovider --planner triton \
    --planner numba-cuda --isolate --maxfail=20 > "$OUT/isolated.txt" 2>&1
  note isolated.txt $? 30
  STEPS="memcheck-builtins" TM=150 OUT="$OUT/evidence" bash reports/gpu/run_evidence.sh > "$OUT/memcheck-step.txt" 2>&1
  grep -a -v "Warning\|warn(" "$OUT/memcheck-step.txt" | tail -n 4
  timeout 200 python3 -m pytest -v -p no:cacheprovider -m "slow or not slow" -n 8 --tb=short \
    tests/test_hostile16.py tests/test_hostile17.py tests/test_hostile18.py \
    tests/test_hostile19.py tests/test_hostile20.py tests/test_hostile20_import.py \
    tests/test_one_call_attacks.py tests/test_wrong_error_parts.py > "$OUT/attack-tests.txt" 2>&1
  echo "exit code: $?" >> "$OUT/attack-tests.txt"; grep -a "FAILED\|exit code\|passed\|failed" "$OUT/attack-tests.txt" | tail -n 20
elif [ "${PART:-1}" = 2 ]; then
  STEPS="fingerprint corpus-builtins gpu-tests" TC=90 TT=200 \
    OUT="$OUT/evidence" bash reports/gpu/run_evidence.sh
  timeout 80 python3 -m pytest conformance/ -q -p no:cacheprovider \
    --planner impls.offsets_planner.triton_planner:launch > "$OUT/external-triton.txt" 2>&1
  note external-triton.txt $?
else
  timeout 330 python3 -m conformance bench --planner python --planner triton --planner numba-cuda \
    --planner triton-bound --planner numba-cuda-bound --repeat 3 --json "$OUT/bench.json" \
    --report "$OUT/bench.md" > "$OUT/bench.txt" 2>&1
  note bench.txt $?
  gzip -f "$OUT/bench.json"; sed -n '1,24p' "$OUT/bench.md"
fi
