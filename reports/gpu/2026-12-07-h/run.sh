#!/usr/bin/env bash
# The device call of this folder, from the repository root on a GPU, `build/` carried and
# `source build/dev_setup.sh` first: the corpus of both GPU planners compiled (with a results
# file), `bench --repeat 3` of the same planners, and `report --bench` of the two (--strict):
# every goal judged on the median of three repeats, each goal record naming the planners it was
# judged on (`planners`), every figure shown beside the whole-corpus run.
#   OUT=/path bash reports/gpu/2026-12-07-h/run.sh
set -uo pipefail
cd "$(dirname "$0")/../../.."
OUT="${OUT:-/tmp/h-out}"
mkdir -p "$OUT"
python3 -c 'import torch; from conformance.fingerprint import fingerprint_text; print(fingerprint_text())' \
  > "$OUT/fingerprint.txt" 2>&1; nvidia-smi -L >> "$OUT/fingerprint.txt"
R=/tmp/h-work; mkdir -p $R
timeout 120 python3 -m pytest conformance/ -q -p no:cacheprovider --subject offsets-planner \
  --planner triton --planner numba-cuda --results $R/corpus.json > "$OUT/corpus.txt" 2>&1
echo "exit code: $?" >> "$OUT/corpus.txt"; tail -n 2 "$OUT/corpus.txt"
timeout 330 python3 -m conformance bench --planner triton --planner numba-cuda --repeat 3 \
  --json $R/bench.json --report "$OUT/bench.md" > "$OUT/bench.txt" 2>&1
echo "exit code: $?" >> "$OUT/bench.txt"; tail -n 2 "$OUT/bench.txt"
python3 -c "import json,sys; d=json.load(open('$R/bench.json')); [print(g['goal'], '|', g['verdict'], '|', g.get('planners')) for g in d['conformance_goals']['goals']]" \
  > "$OUT/goal-planners.txt" 2>&1; cat "$OUT/goal-planners.txt"
timeout 60 python3 -m conformance report $R/corpus.json --bench $R/bench.json --format text \
  --strict > "$OUT/report.txt" 2>&1
echo "report --bench --strict: exit $?" >> "$OUT/report.txt"
grep -E "withheld|WITHHELD|exit" "$OUT/report.txt" | head -n 5
sed -n '5,17p' "$OUT/bench.md"
