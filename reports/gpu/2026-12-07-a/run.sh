#!/usr/bin/env bash
# The device calls of this folder, from the repository root on a GPU, `build/` carried and
# `source build/dev_setup.sh` first (PART picks one):
#   PART=1: the one-pass sweep's Triton look-back configs whose scan programs are one or two warps
#           (no barrier between warps in a tile's reduction and scan), bs 1024 and 4096; then the
#           attack tests the last GPU runs' time limits cut (-v);
#   PART=2: the harness changes of this session on a GPU (no sandbox there: a planner's orphans
#           killed before the results' last write, tests/test_hostile22.py; hostile 20's state
#           tests; the isolated corpus of both GPU planners), then bench --repeat 3 of every
#           built-in planner.
#   OUT=/path PART=1 bash reports/gpu/2026-12-07-a/run.sh
set -uo pipefail
cd "$(dirname "$0")/../../.."
OUT="${OUT:-/tmp/a-out}"
mkdir -p "$OUT"
python3 -c 'import torch; from conformance.fingerprint import fingerprint_text; print(fingerprint_text())' \
  > "$OUT/fingerprint.txt" 2>&1; nvidia-smi -L >> "$OUT/fingerprint.txt"
note() { echo "exit code: $2" >> "$OUT/$1"; grep -a -v "Warning\|warn(" "$OUT/$1" | tail -n "${3:-3}"; }
if [ "${PART:-1}" = 1 ]; then
  for w in 1 2; do
    timeout 130 python3 -m impls.offsets_planner.harness.sweeps.one_pass --out "$OUT/warps$w" \
      --framework triton --bs 1024 --bs 4096 --design roles-lookback --only "num_warps $w," \
      --budget-s 110 > "$OUT/warps$w.txt" 2>&1
    note "warps$w.txt" $? 20
  done
  timeout 220 python3 -m pytest -v -p no:cacheprovider -m "slow or not slow" -n 8 --tb=short \
    tests/test_hostile20.py tests/test_hostile20_import.py tests/test_one_call_attacks.py \
    tests/test_wrong_error_parts.py tests/test_hostile21.py > "$OUT/attack-tests.txt" 2>&1
  echo "exit code: $?" >> "$OUT/attack-tests.txt"
  grep -a "FAILED\|exit code\|passed\|failed" "$OUT/attack-tests.txt" | tail -n 20
else
  timeout 120 python3 -m pytest -v -p no:cacheprovider -m "slow or not slow" -n 8 --tb=short \
    tests/test_hostile22.py tests/test_hostile20.py -k "hostile22 or leaves_such_state" \
    > "$OUT/attack-tests.txt" 2>&1
  echo "exit code: $?" >> "$OUT/attack-tests.txt"
  grep -a "FAILED\|exit code\|passed\|failed" "$OUT/attack-tests.txt" | tail -n 12
  timeout 60 python3 -m pytest conformance/ -q -p no:cacheprovider --planner triton \
    --planner numba-cuda --isolate > "$OUT/isolated.txt" 2>&1
  note isolated.txt $? 6
  timeout 200 python3 -m conformance bench --planner python --planner triton --planner numba-cuda \
    --planner triton-bound --planner numba-cuda-bound --repeat 3 --json "$OUT/bench.json" \
    --report "$OUT/bench.md" > "$OUT/bench.txt" 2>&1
  note bench.txt $?
  gzip -f "$OUT/bench.json"; sed -n '1,24p' "$OUT/bench.md"
fi
