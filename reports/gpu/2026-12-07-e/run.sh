#!/usr/bin/env bash
# The device call of this folder, from the repository root on a GPU, `build/` carried and
# `source build/dev_setup.sh` first: on an H200 only (any other card: exit 3, nothing run),
# bench --repeat 3 of every built-in planner (the figures the issue "Replay at the chain floor"
# asks for), then the corpus compiled on both GPU planners.
#   OUT=/path bash reports/gpu/2026-12-07-e/run.sh
set -uo pipefail
cd "$(dirname "$0")/../../.."
OUT="${OUT:-/tmp/e-out}"
mkdir -p "$OUT"
nvidia-smi -L | grep -q "H200" || { nvidia-smi -L; echo "not an H200: nothing run"; exit 3; }
python3 -c 'import torch; from conformance.fingerprint import fingerprint_text; print(fingerprint_text())' \
  > "$OUT/fingerprint.txt" 2>&1; nvidia-smi -L >> "$OUT/fingerprint.txt"
timeout 200 python3 -m conformance bench --planner python --planner triton --planner numba-cuda \
  --planner triton-bound --planner numba-cuda-bound --repeat 3 --json "$OUT/bench.json" \
  --report "$OUT/bench.md" > "$OUT/bench.txt" 2>&1
echo "exit code: $?" >> "$OUT/bench.txt"; tail -n 2 "$OUT/bench.txt"
gzip -f "$OUT/bench.json"; sed -n '5,17p' "$OUT/bench.md"
grep -E "^\| \`(triton|numba-cuda) \[gpu\]\` +\| \`replay" "$OUT/bench.md" | cut -c1-150
timeout 90 python3 -m pytest conformance/ -q -p no:cacheprovider --planner triton \
  --planner numba-cuda > "$OUT/corpus.txt" 2>&1
echo "exit code: $?" >> "$OUT/corpus.txt"; tail -n 2 "$OUT/corpus.txt"
