#!/usr/bin/env bash
# The device call of this folder, from the repository root on a GPU, `build/` carried and
# `source build/dev_setup.sh` first. On an H200: the bench and corpus of 2026-12-07-e/run.sh
# (the figures the issue "Replay at the chain floor" asks for). On any other card: the corpus
# compiled on both GPU planners with a results file, one bench round of the same planners, and
# `report --bench` of the two: beside that whole-corpus run the figures are shown; beside a
# run of one case (--case bs-0) they are withheld (conformance/reporting/corpus_coverage.py).
#   OUT=/path bash reports/gpu/2026-12-07-g/run.sh
set -uo pipefail
cd "$(dirname "$0")/../../.."
OUT="${OUT:-/tmp/g-out}"
mkdir -p "$OUT"
if nvidia-smi -L | grep -q "H200"; then
  exec bash reports/gpu/2026-12-07-e/run.sh
fi
python3 -c 'import torch; from conformance.fingerprint import fingerprint_text; print(fingerprint_text())' \
  > "$OUT/fingerprint.txt" 2>&1; nvidia-smi -L >> "$OUT/fingerprint.txt"
R=/tmp/g-work; mkdir -p $R
timeout 150 python3 -m pytest conformance/ -q -p no:cacheprovider --subject offsets-planner \
  --planner triton --planner numba-cuda --results $R/corpus.json > "$OUT/corpus.txt" 2>&1
echo "exit code: $?" >> "$OUT/corpus.txt"; tail -n 2 "$OUT/corpus.txt"
timeout 60 python3 -m pytest conformance/ -q -p no:cacheprovider --subject offsets-planner \
  --planner triton --planner numba-cuda --case bs-0 --results $R/one.json > /dev/null 2>&1
echo "one-case run: exit $?" | tee "$OUT/report.txt"
timeout 200 python3 -m conformance bench --planner triton --planner numba-cuda \
  --json $R/bench.json > "$OUT/bench.txt" 2>&1
echo "exit code: $?" >> "$OUT/bench.txt"; tail -n 2 "$OUT/bench.txt"
for run in corpus one; do
  timeout 60 python3 -m conformance report $R/$run.json --bench $R/bench.json --format text \
    --strict > $R/report-$run.txt 2>&1
  echo "report --bench beside $run.json --strict: exit $?" | tee -a "$OUT/report.txt"
  grep -E "withheld|judged on" $R/report-$run.txt | head -n 6 | cut -c1-220 | tee -a "$OUT/report.txt"
  grep -cE "^(triton|numba-cuda) " $R/report-$run.txt | sed 's/^/  table rows: /' >> "$OUT/report.txt"
done
cp $R/report-corpus.txt "$OUT/report-corpus.txt"
