#!/usr/bin/env bash
# The device calls of this folder, from the repository root on a GPU (PART picks one):
#   PART=1: fingerprint, raw_cluster.py (a raw CUDA cluster plan against the floors), eager_split.py
#           (host or device: where an eager call's time goes), then bench --repeat 3 of every
#           built-in planner;
#   PART=5: raw_cluster.py --only-4096 (with the no-scan and warp-only rows);
#   PART=4: the isolated corpus of both GPU planners again (after part2-first's false failures);
#   PART=3: raw_cluster.py again (torch imported first), eager_split.py --triton-only;
#   PART=2: the isolated corpus of both GPU planners, the Triton planner judged as an external
#           planner (never probed: its self-check runs inside the first judged call), the attack tests, the compiled corpus,
#           memcheck and the GPU tests (run_evidence.sh steps) on the session's final tree.
#   OUT=/path PART=1 bash reports/gpu/2026-12-06-g/run.sh
set -uo pipefail
cd "$(dirname "$0")/../../.."
OUT="${OUT:-/tmp/g-out}"
mkdir -p "$OUT"
python3 -c 'from conformance.fingerprint import fingerprint_text; print(fingerprint_text())' \
  > "$OUT/fingerprint.txt" 2>&1; nvidia-smi -L >> "$OUT/fingerprint.txt"
if [ "${PART:-1}" = 5 ]; then  # PART=5: what the CTA's scan costs (raw_cluster.py --only-4096)
  timeout 120 python3 reports/gpu/2026-12-06-g/raw_cluster.py --only-4096 > "$OUT/raw_scan_cost.txt" 2>&1
  echo "exit code: $?" >> "$OUT/raw_scan_cost.txt"
  grep -a -v "Warning\|warn(" "$OUT/raw_scan_cost.txt" | tail -n 30
elif [ "${PART:-1}" = 4 ]; then  # PART=4: the isolated corpus again, after the SIGXFSZ fix
  timeout 120 python3 -m pytest conformance/ -q -p no:cacheprovider --planner triton \
    --planner numba-cuda --isolate > "$OUT/isolated.txt" 2>&1
  echo "exit code: $?" >> "$OUT/isolated.txt"; tail -n 3 "$OUT/isolated.txt"
elif [ "${PART:-1}" = 3 ]; then  # PART=3: raw_cluster.py again (the first call's import order failed), eager_split --triton-only
  timeout 200 python3 reports/gpu/2026-12-06-g/raw_cluster.py > "$OUT/raw_cluster.txt" 2>&1
  echo "exit code: $?" >> "$OUT/raw_cluster.txt"
  grep -a -v "Warning\|warn(" "$OUT/raw_cluster.txt" | tail -n 70
  timeout 60 python3 reports/gpu/2026-12-06-g/eager_split.py --triton-only > "$OUT/eager_split_triton.txt" 2>&1
  echo "exit code: $?" >> "$OUT/eager_split_triton.txt"; grep -a -v "Warning\|warn(" "$OUT/eager_split_triton.txt" | tail -n 5
elif [ "${PART:-1}" = 1 ]; then
  timeout 150 python3 reports/gpu/2026-12-06-g/raw_cluster.py > "$OUT/raw_cluster.txt" 2>&1
  echo "exit code: $?" >> "$OUT/raw_cluster.txt"
  grep -v "Warning\|warn(" "$OUT/raw_cluster.txt" | tail -n 60
  timeout 90 python3 reports/gpu/2026-12-06-g/eager_split.py > "$OUT/eager_split.txt" 2>&1
  echo "exit code: $?" >> "$OUT/eager_split.txt"; grep -v "Warning\|warn(" "$OUT/eager_split.txt" | tail -n 8
  timeout 300 python3 -m conformance bench --planner python --planner triton --planner numba-cuda \
    --planner triton-bound --planner numba-cuda-bound --repeat 3 --json "$OUT/bench.json" \
    --report "$OUT/bench.md" > "$OUT/bench.txt" 2>&1
  echo "exit code: $?" >> "$OUT/bench.txt"
  gzip -f "$OUT/bench.json"
  sed -n '1,20p' "$OUT/bench.md"; tail -n 3 "$OUT/bench.txt"
else
  PYTHONPATH= python3 -m pip install -q --no-index --no-deps build/wheels/*.whl  # for test subprocesses
  timeout 100 python3 -m pytest conformance/ -q -p no:cacheprovider --planner triton \
    --planner numba-cuda --isolate > "$OUT/isolated.txt" 2>&1
  echo "exit code: $?" >> "$OUT/isolated.txt"; tail -n 3 "$OUT/isolated.txt"
  timeout 80 python3 -m pytest conformance/ -q -p no:cacheprovider \
    --planner impls.offsets_planner.triton_planner:launch > "$OUT/external-triton.txt" 2>&1
  echo "exit code: $?" >> "$OUT/external-triton.txt"; tail -n 3 "$OUT/external-triton.txt"
  STEPS="fingerprint corpus-builtins memcheck-builtins gpu-tests" TC=90 TM=150 TT=170 \
    OUT="$OUT/evidence" bash reports/gpu/run_evidence.sh
  timeout 130 python3 -m pytest -q -p no:cacheprovider -m "slow or not slow" -n 8 \
    tests/test_hostile16.py tests/test_hostile17.py tests/test_hostile18.py \
    tests/test_one_call_attacks.py tests/test_wrong_error_parts.py > "$OUT/attack-tests.txt" 2>&1
  echo "exit code: $?" >> "$OUT/attack-tests.txt"; tail -n 3 "$OUT/attack-tests.txt"
fi
