#!/usr/bin/env bash
# The device call of this folder, from the repository root on a GPU, `build/` carried and
# `source build/dev_setup.sh` first: the one-pass sweep's Numba `warp-lookback` chunks with joint
# re-polls (the planner's poll order) at bs 4096; then the attack tests no GPU run has reached
# (hostile 22's daemon that kills its reaper and the fuzz probe's daemon, hostile 20's
# `renames_its_process` and `replaces_a_logger`), -v. Everything under $OUT/c, packed as c.tgz.
#   OUT=/path bash reports/gpu/2026-12-07-c/run.sh
set -uo pipefail
cd "$(dirname "$0")/../../.."
OUT="${OUT:-/tmp/c-out}"
W="$OUT/c"
mkdir -p "$W"
python3 -c 'import torch; from conformance.fingerprint import fingerprint_text; print(fingerprint_text())' \
  > "$W/fingerprint.txt" 2>&1; nvidia-smi -L >> "$W/fingerprint.txt"
timeout 100 python3 -m impls.offsets_planner.harness.sweeps.one_pass --out "$W/sweep" \
  --framework numba-cuda --bs 4096 --design warp-lookback --only "joint_repoll True" \
  --json "$W/sweep/rows.json" --budget-s 80 > "$W/sweep.txt" 2>&1
echo "exit code: $?" >> "$W/sweep.txt"
grep -a "numba-cuda  | 4096" "$W/sweep/one_pass.md" | cut -c1-130
timeout 150 python3 -m pytest -v -p no:cacheprovider -m "slow or not slow" -n 4 --tb=short \
  tests/test_hostile22.py tests/test_hostile20.py \
  -k "kills_its_reaper or fuzz or renames_its_process or replaces_a_logger" > "$W/attack-tests.txt" 2>&1
echo "exit code: $?" >> "$W/attack-tests.txt"
grep -a "PASS\|FAIL\|XFAIL\|exit code\|passed\|failed" "$W/attack-tests.txt" | tail -n 12
cd "$OUT" && tar czf c.tgz c && rm -r c
