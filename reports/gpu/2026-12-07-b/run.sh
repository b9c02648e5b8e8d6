#!/usr/bin/env bash
# The device call of this folder, from the repository root on a GPU, `build/` carried and
# `source build/dev_setup.sh` first:
#   1. the one-pass sweep's Numba `warp-lookback` configs at bs 4096, with and without coalesced
#      request loads and output stores (--json: the rows as data);
#   2. decide.py: when a coalesced config beats the planner's current launch by more than
#      0.03 us, this copy of the tree takes it (COALESCED = True and that chunk in the 4096 row
#      of numba_cuda_planner.DESIGNS; planner.diff shows the change), else it stays as it is;
#   3. bench --repeat 3 of every built-in planner;
#   4. the corpus compiled on both Numba planners, then under memcheck on numba-cuda;
#   5. the Numba planner's GPU tests.
#   OUT=/path bash reports/gpu/2026-12-07-b/run.sh
set -uo pipefail
cd "$(dirname "$0")/../../.."
OUT="${OUT:-/tmp/b-out}"
mkdir -p "$OUT"
python3 -c 'import torch; from conformance.fingerprint import fingerprint_text; print(fingerprint_text())' \
  > "$OUT/fingerprint.txt" 2>&1; nvidia-smi -L >> "$OUT/fingerprint.txt"
note() { echo "exit code: $2" >> "$OUT/$1"; grep -a -v "Warning\|warn(" "$OUT/$1" | tail -n "${3:-3}"; }
timeout 140 python3 -m impls.offsets_planner.harness.sweeps.one_pass --out "$OUT/sweep" \
  --framework numba-cuda --bs 4096 --design warp-lookback --json "$OUT/sweep/rows.json" \
  --budget-s 120 > "$OUT/sweep.txt" 2>&1
note sweep.txt $? 16
P=impls/offsets_planner/numba_cuda_planner.py
if CHUNK=$(python3 reports/gpu/2026-12-07-b/decide.py "$OUT/sweep/rows.json" 2>>"$OUT/sweep.txt"); then
  cp "$P" "$OUT/planner.before"
  sed -i "s/^COALESCED = False$/COALESCED = True/; s/(4096, (\"warp-lookback\", 32, 128, 0))/(4096, (\"warp-lookback\", 32, $CHUNK, 0))/" "$P"
  diff -u "$OUT/planner.before" "$P" > "$OUT/planner.diff"; rm "$OUT/planner.before"
  echo "taken: coalesced, chunk $CHUNK"; grep -c "^[-+][^-+]" "$OUT/planner.diff"
else
  echo "not taken: the planner as it is"
fi
tail -n 1 "$OUT/sweep.txt"
timeout 200 python3 -m conformance bench --planner python --planner triton --planner numba-cuda \
  --planner triton-bound --planner numba-cuda-bound --repeat 3 --json "$OUT/bench.json" \
  --report "$OUT/bench.md" > "$OUT/bench.txt" 2>&1
note bench.txt $?
gzip -f "$OUT/bench.json"; sed -n '1,24p' "$OUT/bench.md"
timeout 60 python3 -m pytest conformance/ -q -p no:cacheprovider --planner numba-cuda \
  --planner numba-cuda-bound > "$OUT/corpus.txt" 2>&1
note corpus.txt $?
timeout 110 python3 -m pytest conformance/ -q -p no:cacheprovider --planner numba-cuda \
  --sanitize memcheck --isolate-timeout 300 --results "$OUT/memcheck.json" > "$OUT/memcheck.txt" 2>&1
note memcheck.txt $?
timeout 60 python3 -m pytest -q -p no:cacheprovider -m "slow or not slow" tests/test_numba_cuda_planner.py \
  tests/test_numba_lookback_default.py tests/test_numba_joint_repoll_fallback.py \
  tests/test_numba_warp_lookback_default.py > "$OUT/gpu-tests.txt" 2>&1
note gpu-tests.txt $?
