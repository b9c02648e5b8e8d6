#!/usr/bin/env bash
# The device call of this folder, from the repository root on a GPU: upstream's 0.5.23 launcher
# judged unchanged on CUDA, from the published wheel carried under build/upstream/, once plainly
# (no fault detector: the fault-only divergence must read declared, not xpass) and once under
# compute-sanitizer memcheck; each run's files packed into $OUT/<name>.tgz, its log beside it.
#   OUT=/path bash reports/gpu/2026-12-06-e/run.sh
set -uo pipefail
cd "$(dirname "$0")/../../.."
OUT="${OUT:-/tmp/upstream-gpu}"
W="$(mktemp -d /tmp/upstream-XXXX)"
mkdir -p "$OUT"
WHEEL=build/upstream/sglang-0.5.23-cp311-cp311-manylinux_2_34_x86_64.whl
python3 -c 'from conformance.fingerprint import fingerprint_text; print(fingerprint_text())' \
  > "$OUT/fingerprint.txt" 2>&1; nvidia-smi -L >> "$OUT/fingerprint.txt"
timeout 200 python3 -m conformance upstream 0.5.23 --wheel "$WHEEL" --cache "$W/cache" \
  --out "$W/plain" > "$OUT/plain.txt" 2>&1
echo "exit code: $?" >> "$OUT/plain.txt"
tail -n 25 "$OUT/plain.txt"
timeout 330 python3 -m conformance upstream 0.5.23 --wheel "$WHEEL" --cache "$W/cache" \
  --out "$W/memcheck" --pytest-args='--sanitize memcheck --isolate-timeout 300' \
  > "$OUT/memcheck.txt" 2>&1
echo "exit code: $?" >> "$OUT/memcheck.txt"
tail -n 25 "$OUT/memcheck.txt"
for n in plain memcheck; do [ -d "$W/$n" ] && tar czf "$OUT/$n.tgz" -C "$W/$n" .; done
ls -l "$OUT"
