#!/usr/bin/env bash
# On a 2-GPU H200 host, in about 6 minutes: fingerprint, the benchmark suite on one GPU,
# the conformance corpus under pytest-xdist with 1 and 2 workers (each worker on its own GPU).
#
#   OUT=/path/to/out bash reports/gpu/run_gpu_suite.sh          # from the repository root
#   GPU_SUITE_SMALL=1 OUT=/tmp/o bash reports/gpu/run_gpu_suite.sh   # CPU dry run of the logic
#
# Expects torch/triton/numba/numba-cuda, pytest-benchmark, pytest-xdist, tabulate and hypothesis on
# the image, and numpy 2.4.x + jsonschema on PYTHONPATH (numba 0.68 cannot compile with numpy 2.5:
# docs/numba-numpy.md). Writes under $OUT:
#   fingerprint.txt  bench.json (pytest-benchmark) bench.txt (its output) bench.md (the table)
#   xdist.txt (wall times, ratio, per-worker GPUs)  results-n1.json results-n2.json  pin.json
# Each step has its own timeout and exit code; a failing step does not stop the others. Each
# corpus run gets a fresh Triton cache, so -n 1 and -n 2 both pay their compiles.
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT="${OUT:-/tmp/gpu-suite-out}"
mkdir -p "$OUT"
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
export TRITON_CACHE_DIR="$(mktemp -d /tmp/triton-cache-XXXX)"  # first calls compile for real
PY="${PYTHON:-python3}"
T0=$(date +%s)
now() { "$PY" -c 'import time; print(f"{time.time():.3f}")'; }
elapsed() { echo "[$(( $(date +%s) - T0 )) s] $*"; }

if [ "${GPU_SUITE_SMALL:-0}" = "1" ]; then  # CPU dry run: tiny sizes, python planner
  BENCH_ARGS=(--planner python --planner triton --bench-bs 0,1 --bench-rounds 2)
  CORPUS_ARGS=(--planner python)
  PIN_ARGS=(--planner python --bench-bs 1 --bench-mode eager --bench-rounds 2)
  TB=120 TC=120 TP=60
else
  BENCH_ARGS=()
  CORPUS_ARGS=()
  PIN_ARGS=(--planner triton --planner numba-cuda --bench-bs 1,4096 --bench-mode replay)
  TB=${TB:-170} TC=${TC:-100} TP=${TP:-60}
fi

# 1. fingerprint ------------------------------------------------------------------------------
elapsed "fingerprint"
{
  "$PY" -c 'from conformance.bench.timing import fingerprint_text; print(fingerprint_text())'
  "$PY" -c 'import torch; print("torch sees", torch.cuda.device_count(), "GPU(s)")'
  "$PY" -m conformance planners
  nvidia-smi -L 2>/dev/null || echo "nvidia-smi: not available"
} 2>&1 | tee "$OUT/fingerprint.txt"

# 2. benchmark suite on one GPU ---------------------------------------------------------------
elapsed "benchmark suite (GPU 0)"
CUDA_VISIBLE_DEVICES="${BENCH_GPU:-0}" timeout "$TB" "$PY" -m pytest conformance/bench -q \
  -p no:cacheprovider --benchmark-json="$OUT/bench.json" --bench-report="$OUT/bench.md" \
  --benchmark-columns=min,median,iqr,rounds,iterations --benchmark-sort=name \
  "${BENCH_ARGS[@]}" > "$OUT/bench.txt" 2>&1
echo "bench exit code: $?" | tee -a "$OUT/bench.txt"
sed -n '/benchmark table/,$p' "$OUT/bench.txt" | tail -n 120

# 3. conformance corpus under xdist: 1 worker, then 2 (one GPU each) --------------------------
corpus() {  # $1 = workers
  local start end rc
  start=$(now)
  TRITON_CACHE_DIR="$(mktemp -d /tmp/triton-cache-XXXX)" timeout "$TC" "$PY" -m pytest conformance/ -n "$1" -q -p no:cacheprovider \
    --results="$OUT/results-n$1.json" "${CORPUS_ARGS[@]}" > "$OUT/corpus-n$1.txt" 2>&1
  rc=$?
  end=$(now)
  echo "$1 $start $end $rc"
}
elapsed "conformance corpus -n 1"
R1=$(corpus 1)
elapsed "conformance corpus -n 2 (sampling GPU processes)"
if command -v nvidia-smi >/dev/null && [ "${GPU_SUITE_SMALL:-0}" != "1" ]; then
  nvidia-smi --query-compute-apps=gpu_bus_id,pid,process_name --format=csv,noheader -lms 500 \
    > "$OUT/xdist-gpu-apps.txt" 2>&1 &
  SAMPLER=$!
else
  SAMPLER=""
fi
R2=$(corpus 2)
[ -n "$SAMPLER" ] && kill "$SAMPLER" 2>/dev/null

# 4. pinning + merged benchmark results under -n 2 ---------------------------------------------
elapsed "benchmarks under -n 2 (pinning, one merged JSON)"
timeout "$TP" "$PY" -m pytest conformance/bench -n 2 -q -p no:cacheprovider \
  --benchmark-json="$OUT/pin.json" "${PIN_ARGS[@]}" > "$OUT/pin.txt" 2>&1
echo "pin exit code: $?" >> "$OUT/pin.txt"

"$PY" - "$OUT" "$R1" "$R2" <<'EOF' | tee "$OUT/xdist.txt"
import collections, json, sys
out, runs = sys.argv[1], [r.split() for r in sys.argv[2:]]
walls = {}
print("# pytest conformance/ under pytest-xdist\n")
for workers, start, end, rc in runs:
    walls[workers] = float(end) - float(start)
    tail = open(f"{out}/corpus-n{workers}.txt").read().strip().splitlines()[-1:]
    print(f"-n {workers}: wall {walls[workers]:.1f} s, exit code {rc}, {tail[0] if tail else ''}")
    try:
        doc = json.load(open(f"{out}/results-n{workers}.json"))
        per = collections.Counter((r.get("worker"), r["status"]) for r in doc["results"])
        print(f"   results-n{workers}.json: {len(doc['results'])} results, complete="
              f"{doc['complete']}, by (worker, status): {dict(sorted(per.items(), key=str))}")
    except Exception as exc:
        print(f"   results-n{workers}.json unreadable: {exc}")
if walls.get("1") and walls.get("2"):
    print(f"\nwall-time ratio -n 2 / -n 1: {walls['2'] / walls['1']:.2f} "
          f"(speed-up {walls['1'] / walls['2']:.2f}x)")
try:
    apps = open(f"{out}/xdist-gpu-apps.txt").read().split("\n")
    buses = collections.Counter(line.split(",")[0] for line in apps if line.strip())
    print(f"GPU processes sampled during -n 2, per bus id: {dict(buses)}")
except OSError:
    print("GPU processes during -n 2: not sampled")
try:
    doc = json.load(open(f"{out}/pin.json"))
    pins = collections.Counter((b["extra_info"].get("worker"), b["extra_info"].get("gpu_pinning"),
                                b["extra_info"].get("gpu_id")) for b in doc["benchmarks"])
    print(f"\nbenchmarks under -n 2: {len(doc['benchmarks'])} in one pin.json; "
          "(worker, pinning, physical GPU): benchmarks")
    for key, n in sorted(pins.items(), key=str):
        print(f"   {key}: {n}")
except Exception as exc:
    print(f"pin.json unreadable: {exc}")
EOF

elapsed "done; $(( 360 - ($(date +%s) - T0) )) s of the 6-minute budget left"
# --- lead: append the fuzz command below this line (e.g. ... > "$OUT/fuzz.txt" 2>&1) ---
