#!/usr/bin/env bash
# The device call of this folder, from the repository root on a GPU, `build/` carried and
# `source build/dev_setup.sh` first. On an H200: the bench and corpus of 2026-12-07-e/run.sh
# (the figures the issue "Replay at the chain floor" asks for). On any other card: the corpus
# (202 offsets-planner cases, with random-swa-lut-bs-100, random-swa-capacity-under-bs-300 and
# random-swa-lut-bs-700: the LUT in the 128-, 512- and 2048-lane blocks) compiled on the four GPU
# planners, then those three cases, bs-1021-tail and bs-1024-tail under
# --sanitize memcheck on triton and numba-cuda.
#   OUT=/path bash reports/gpu/2026-12-07-j/run.sh
set -uo pipefail
cd "$(dirname "$0")/../../.."
OUT="${OUT:-/tmp/j-out}"
mkdir -p "$OUT"
if nvidia-smi -L | grep -q "H200"; then
  exec bash reports/gpu/2026-12-07-e/run.sh
fi
python3 -c 'import torch; from conformance.fingerprint import fingerprint_text; print(fingerprint_text())' \
  > "$OUT/fingerprint.txt" 2>&1; nvidia-smi -L >> "$OUT/fingerprint.txt"
timeout 240 python3 -m pytest conformance/ -q -p no:cacheprovider --subject offsets-planner \
  --planner triton --planner numba-cuda --planner triton-bound --planner numba-cuda-bound \
  > "$OUT/corpus.txt" 2>&1
echo "exit code: $?" >> "$OUT/corpus.txt"; tail -n 2 "$OUT/corpus.txt"
grep -E "^(triton|numba-cuda)" "$OUT/corpus.txt" | head -n 8
timeout 200 python3 -m pytest conformance/ -q -p no:cacheprovider --subject offsets-planner \
  --planner triton --planner numba-cuda --sanitize memcheck --case random-swa-lut-bs-100 --case random-swa-lut-bs-700 \
  --case random-swa-capacity-under-bs-300 --case bs-1021-tail \
  --case bs-1024-tail > "$OUT/memcheck.txt" 2>&1
echo "exit code: $?" >> "$OUT/memcheck.txt"; tail -n 2 "$OUT/memcheck.txt"
grep -E "^(triton|numba-cuda)" "$OUT/memcheck.txt" | head -n 4
