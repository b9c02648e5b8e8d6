#!/usr/bin/env bash
# The device calls of this folder, from the repository root on a GPU (PART picks one):
#   PART=1: fingerprint; where_time_goes.py plainly (its byte checks), then under Nsight Compute (--set
#           full, source counters) with the report's details page as text; the process-state and
#           one-call attack tests (hostile 14, 15, 16, the one-call attacks), slow ones included;
#           (that call's attack tests could not import jsonschema in the corpus runs they start:
#           pip saw the carried wheels on PYTHONPATH and installed nothing into the image's venv);
#   PART=2: the carried wheels installed into the image's venv (PYTHONPATH cleared for pip);
#           cluster_scan.py; where_time_goes.py under Nsight Compute with warm caches and the
#           application's clocks (as a replay sees them); the attack tests again;
#   PART=4 (run after PART=2): cluster_scan.py --two-d, every tensor of the kernel 2-D;
#   PART=5: seed_tiles.py (the Triton planner's seed programs with 64 to 512 lanes);
#   PART=6: seed_tiles.py --wider (128 to 2048 lanes at bs 1536, 2560 and 4096);
#   PART=7: gap_split.py (the floor in 256-thread blocks, the design without its look-back wait);
#   PART=8: scan_only.py (the planner's scan programs alone, scan tiles 128 to 512);
#   PART=9: scan_only.py --narrow (scan tiles 64 and 128, alone and in whole plans);
#   PART=3: the isolated corpus of both GPU planners, then run_evidence.sh's compiled corpus,
#           memcheck and GPU tests, the evidence packed into $OUT/evidence/evidence.tgz
#           (STEPS overrides run_evidence.sh's steps: the rerun after the sys.modules fix ran
#           STEPS="fingerprint corpus-builtins memcheck-builtins").
#   OUT=/path PART=1 bash reports/gpu/2026-12-06-f/run.sh
set -uo pipefail
cd "$(dirname "$0")/../../.."
OUT="${OUT:-/tmp/profile-out}"
mkdir -p "$OUT"
if [ "${PART:-1}" = 1 ]; then
  python3 -c 'from conformance.fingerprint import fingerprint_text; print(fingerprint_text())' \
    > "$OUT/fingerprint.txt" 2>&1; nvidia-smi -L >> "$OUT/fingerprint.txt"
  timeout 120 python3 reports/gpu/2026-12-06-f/where_time_goes.py > "$OUT/where_time_goes.txt" 2>&1
  echo "exit code: $?" >> "$OUT/where_time_goes.txt"; tail -n 6 "$OUT/where_time_goes.txt"
  NCU="$(command -v ncu || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -n 1)"
  echo "ncu: ${NCU:-none}" > "$OUT/ncu.txt"
  timeout 240 "$NCU" --profile-from-start off --set full --import-source yes -f \
    -o "$OUT/bs4096" python3 reports/gpu/2026-12-06-f/where_time_goes.py >> "$OUT/ncu.txt" 2>&1
  echo "exit code: $?" >> "$OUT/ncu.txt"; tail -n 8 "$OUT/ncu.txt"
  "$NCU" -i "$OUT/bs4096.ncu-rep" --page details > "$OUT/bs4096-details.txt" 2>&1
  "$NCU" -i "$OUT/bs4096.ncu-rep" --page source --csv --print-source sass \
    > "$OUT/bs4096-source.csv" 2>&1
  gzip -f "$OUT/bs4096-source.csv"
  grep -E "^  [a-z_].*\(|Duration|Warp Cycles Per Issued|Stall" "$OUT/bs4096-details.txt" | head -n 60
  python3 -m pip install -q --no-index --no-deps build/wheels/*.whl  # for the runs tests start
  timeout 200 python3 -m pytest -q -p no:cacheprovider -m "slow or not slow" -n 8 \
    tests/test_hostile14.py tests/test_hostile15.py tests/test_hostile16.py \
    tests/test_one_call_attacks.py > "$OUT/attack-tests.txt" 2>&1
  echo "exit code: $?" >> "$OUT/attack-tests.txt"; tail -n 4 "$OUT/attack-tests.txt"
elif [ "$PART" = 5 ]; then
  timeout 300 python3 reports/gpu/2026-12-06-f/seed_tiles.py > "$OUT/seed_tiles.txt" 2>&1
  echo "exit code: $?" >> "$OUT/seed_tiles.txt"
  grep -E "^ ?[0-9]|candidate|exit|Error" "$OUT/seed_tiles.txt" | tail -n 40
elif [ "$PART" = 6 ]; then
  timeout 300 python3 reports/gpu/2026-12-06-f/seed_tiles.py --wider > "$OUT/seed_tiles_wider.txt" 2>&1
  echo "exit code: $?" >> "$OUT/seed_tiles_wider.txt"
  grep -E "^ ?[0-9]|candidate|exit|Error" "$OUT/seed_tiles_wider.txt" | tail -n 40
elif [ "$PART" = 7 ]; then
  timeout 300 python3 reports/gpu/2026-12-06-f/gap_split.py > "$OUT/gap_split.txt" 2>&1
  echo "exit code: $?" >> "$OUT/gap_split.txt"
  grep -E "^ ?[0-9]|candidate|exit|Error" "$OUT/gap_split.txt" | tail -n 40
elif [ "$PART" = 8 ]; then
  timeout 300 python3 reports/gpu/2026-12-06-f/scan_only.py > "$OUT/scan_only.txt" 2>&1
  echo "exit code: $?" >> "$OUT/scan_only.txt"
  grep -E "^ ?[0-9]|differ|exit|Error" "$OUT/scan_only.txt" | tail -n 40
elif [ "$PART" = 9 ]; then
  timeout 300 python3 reports/gpu/2026-12-06-f/scan_only.py --narrow > "$OUT/scan_narrow.txt" 2>&1
  echo "exit code: $?" >> "$OUT/scan_narrow.txt"
  grep -E "^ ?[0-9]|differ|exit|Error" "$OUT/scan_narrow.txt" | tail -n 40
elif [ "$PART" = 4 ]; then
  timeout 200 python3 reports/gpu/2026-12-06-f/cluster_scan.py --two-d > "$OUT/cluster_scan_2d.txt" 2>&1
  echo "exit code: $?" >> "$OUT/cluster_scan_2d.txt"
  grep -E "^ ?[0-9]|candidate|exit|error:" "$OUT/cluster_scan_2d.txt" | tail -n 40
elif [ "$PART" = 2 ]; then
  python3 -c 'from conformance.fingerprint import fingerprint_text; print(fingerprint_text())' \
    > "$OUT/fingerprint.txt" 2>&1; nvidia-smi -L >> "$OUT/fingerprint.txt"
  PYTHONPATH= python3 -m pip install -q --no-index --no-deps build/wheels/*.whl
  timeout 200 python3 reports/gpu/2026-12-06-f/cluster_scan.py > "$OUT/cluster_scan.txt" 2>&1
  echo "exit code: $?" >> "$OUT/cluster_scan.txt"; grep -v "Warning\|warn(" "$OUT/cluster_scan.txt" | tail -n 40
  NCU="$(command -v ncu || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -n 1)"
  timeout 120 "$NCU" --profile-from-start off --cache-control none --clock-control none \
    --section SpeedOfLight --section WarpStateStats --section SchedulerStats --section LaunchStats \
    -f -o "$OUT/bs4096-warm" python3 reports/gpu/2026-12-06-f/where_time_goes.py > "$OUT/ncu-warm.txt" 2>&1
  echo "exit code: $?" >> "$OUT/ncu-warm.txt"
  "$NCU" -i "$OUT/bs4096-warm.ncu-rep" --page details > "$OUT/bs4096-warm-details.txt" 2>&1
  grep -E "^  [a-z_].*\(|Duration|Elapsed Cycles|SM Active Cycles" "$OUT/bs4096-warm-details.txt" | cut -c1-60
  timeout 200 python3 -m pytest -q -p no:cacheprovider -m "slow or not slow" -n 8 \
    tests/test_hostile14.py tests/test_hostile15.py tests/test_hostile16.py \
    tests/test_one_call_attacks.py tests/test_wrong_error_parts.py > "$OUT/attack-tests.txt" 2>&1
  echo "exit code: $?" >> "$OUT/attack-tests.txt"; tail -n 4 "$OUT/attack-tests.txt"
else
  timeout 150 python3 -m pytest conformance/ -q -p no:cacheprovider --planner triton \
    --planner numba-cuda --isolate > "$OUT/isolated.txt" 2>&1
  echo "exit code: $?" >> "$OUT/isolated.txt"
  tail -n 5 "$OUT/isolated.txt"
  STEPS="${STEPS:-fingerprint corpus-builtins memcheck-builtins gpu-tests}" TC=100 TM=150 TT=150 \
    OUT="$OUT/evidence" bash reports/gpu/run_evidence.sh
fi
