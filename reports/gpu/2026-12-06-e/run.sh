#!/usr/bin/env bash
# The device call of this folder, from the repository root on a GPU: upstream's 0.5.23 launcher
# judged on CUDA, laid out from its published wheel (`python -m conformance upstream 0.5.23`
# here, its site/ folder carried as build/upstream/site; the run records each file's hash), once
# plainly (no fault detector: the fault-only divergence must read declared, not xpass) and once
# under compute-sanitizer memcheck, the manifests on; results and logs straight into $OUT.
#   OUT=/path bash reports/gpu/2026-12-06-e/run.sh
set -uo pipefail
cd "$(dirname "$0")/../../.."
OUT="${OUT:-/tmp/upstream-gpu}"
mkdir -p "$OUT"
export CONFORMANCE_PLANNER_PATH="$PWD/build/upstream/site"
UPSTREAM="sglang.kernels.ops.kv_canary.plan.offsets_kernel:launch_plan_offsets_kernel"
python3 -c 'from conformance.fingerprint import fingerprint_text; print(fingerprint_text())' \
  > "$OUT/fingerprint.txt" 2>&1; nvidia-smi -L >> "$OUT/fingerprint.txt"
timeout 200 python3 -m pytest conformance/ -q -p no:cacheprovider --planner "$UPSTREAM" \
  --results "$OUT/plain.json" > "$OUT/plain.txt" 2>&1
echo "exit code: $?" >> "$OUT/plain.txt"
tail -n 30 "$OUT/plain.txt"
timeout 330 python3 -m pytest conformance/ -q -p no:cacheprovider --planner "$UPSTREAM" \
  --sanitize memcheck --isolate-timeout 300 --results "$OUT/memcheck.json" > "$OUT/memcheck.txt" 2>&1
echo "exit code: $?" >> "$OUT/memcheck.txt"
tail -n 30 "$OUT/memcheck.txt"
gzip -f "$OUT/plain.json" "$OUT/memcheck.json" 2>/dev/null
ls -l "$OUT"
