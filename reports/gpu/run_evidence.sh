#!/usr/bin/env bash
# The GPU evidence of reports/gpu/ and reports/upstream/ in one pass on a CUDA host (one GPU):
#   1. fingerprint and planners;
#   2. the corpus on every built-in planner, bound forms included (compiled Triton, Numba CUDA);
#   3. the corpus under compute-sanitizer memcheck, every case in a sanitized worker, same planners;
#   4. upstream's launcher (if importable) under memcheck, judged with its manifest;
#   5. the harness's GPU-only tests;
#   6. the benchmark suite with every planner, bound forms and upstream's (only when STEPS names
#      `bench`: STEPS="fingerprint bench" runs just that; REPEAT=3 judges each goal on the median
#      of three repeats in the one run);
#   7. `sandbox`: an isolated corpus run on CUDA (the sandbox's CUDA fallback, a non-dumpable
#      judge with CUDA IPC) and one case with `--sandbox namespace` (does CUDA IPC cross a PID
#      namespace?), only when STEPS names it;
#   8. `launcher-shape`: the eager launcher-shape sweep, each -bound planner against the planner it
#      binds (impls/offsets_planner/harness/sweeps/launcher_shape.py), only when STEPS names it;
#   9. `entries-gpu`: the entries planner's compiled Triton and Numba CUDA planners against the
#      tests' oracle, CUDA-graph capture and replay (tests/test_entries_gpu.py), only when named;
#  10. `one-pass`: the one-pass kernel sweep (impls/offsets_planner/harness/sweeps/one_pass.py), only when named;
#  11. `memo-cost`: the validation memo's per-call cost on the GPU
#      (impls/offsets_planner/harness/sweeps/memo_cost.py --device cuda), only when named;
#  11b. `memcheck-subjects`: the one-call subjects' cases (entries planner; PIPELINE=1 adds the
#      whole plan) in one pytest process run whole under compute-sanitizer memcheck (a one-call
#      case runs in pytest's process, so --sanitize skips it; CUDA API errors are not counted:
#      numba-cuda's driver lookups raise 34 cuGetProcAddress ones), only when named;
#  12. `entries-bench`: the entries planner's sweep (impls/entries_planner/harness/entries.py --device
#      cuda: eager, replay, empty and gather floors, the whole step against upstream's offsets
#      launcher when importable, the whole plan in one call against upstream's wrapper when
#      importable; UPSTREAM_ENTRIES=MODULE:CALLABLE adds upstream's entries launcher), writing
#      entries-bench.md and entries-bench.json, only when named.
#
#   OUT=/path/to/out bash reports/gpu/run_evidence.sh     # from the repository root
#   BUILTINS="--planner python" SANITIZED="--planner python" OUT=/tmp/o bash reports/gpu/run_evidence.sh
#                                                           # a CPU dry run of the logic
#
# Expects torch, triton, numba, numba-cuda, pytest, pytest-benchmark, tabulate, jinja2, hypothesis
# and jsonschema importable (numba-cuda 0.30 needs numpy < 2.5: docs/numba-numpy.md), and, for
# step 4, upstream's sglang package installed or its folder in CONFORMANCE_PLANNER_PATH (never on
# PYTHONPATH: a planner's folder on the judge's path is refused). Each step has its own timeout and exit code; a
# failing step does not stop the others. Everything lands in $OUT/evidence.tgz plus a log.
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT="${OUT:-/tmp/gpu-evidence}"
W="$(mktemp -d /tmp/evidence-XXXX)"
mkdir -p "$OUT"
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1
PY="${PYTHON:-python3}"
UPSTREAM="sglang.kernels.ops.kv_canary.plan.offsets_kernel:launch_plan_offsets_kernel"
read -r -a BUILTINS <<< "${BUILTINS:---planner triton --planner numba-cuda --planner triton-bound --planner numba-cuda-bound}"
read -r -a SANITIZED <<< "${SANITIZED:---planner triton --planner numba-cuda}"  # the bound forms launch the same kernels
T0=$(date +%s)
step() { echo "[$(( $(date +%s) - T0 )) s] $*"; }
STEPS="${STEPS:-fingerprint corpus-builtins memcheck-builtins memcheck-upstream gpu-tests}"
run() {  # name timeout command... : output to $W/name.txt, exit code appended; only STEPS run
  local name=$1 limit=$2; shift 2
  case " $STEPS " in *" $name "*) ;; *) return 0 ;; esac
  step "$name"
  timeout "$limit" "$@" > "$W/$name.txt" 2>&1
  local rc=$?
  echo "exit code: $rc" >> "$W/$name.txt"
  tail -n 25 "$W/$name.txt"
}

run fingerprint 60 bash -c "$PY -c 'from conformance.fingerprint import fingerprint_text; print(fingerprint_text())'; $PY -m conformance planners; nvidia-smi -L; command -v compute-sanitizer"
run corpus-builtins "${TC:-200}" "$PY" -m pytest conformance/ -q -p no:cacheprovider "${BUILTINS[@]}" \
  --planner python --results "$W/corpus-builtins.json"
run memcheck-builtins "${TM:-240}" "$PY" -m pytest conformance/ -q -p no:cacheprovider "${SANITIZED[@]}" \
  --sanitize memcheck --isolate-timeout 300 --results "$W/memcheck-builtins.json"
if PYTHONPATH="$PYTHONPATH${CONFORMANCE_PLANNER_PATH:+:$CONFORMANCE_PLANNER_PATH}" "$PY" -c \
    "import sglang.kernels.ops.kv_canary.plan.offsets_kernel" 2>/dev/null; then
  run memcheck-upstream "${TU:-200}" "$PY" -m pytest conformance/ -q -p no:cacheprovider \
    --planner "$UPSTREAM" --sanitize memcheck --isolate-timeout 300 --results "$W/memcheck-upstream.json"
  if [ -f "$W/memcheck-upstream.json" ]; then
    "$PY" -m conformance report "$W/memcheck-upstream.json" --format markdown --out "$W/memcheck-upstream.md"
    "$PY" -m conformance report "$W/memcheck-upstream.json" --out "$W/memcheck-upstream.html"
  fi
else
  step "upstream's launcher is not importable: step 4 skipped"
fi
for f in corpus-builtins memcheck-builtins; do
  [ -f "$W/$f.json" ] && "$PY" -m conformance report "$W/$f.json" --format markdown --out "$W/$f.md"
done
run gpu-tests "${TT:-200}" "$PY" -m pytest -q -p no:cacheprovider tests/test_triton_planner.py \
  tests/test_numba_cuda_planner.py tests/test_sanitizer.py tests/test_hostile.py tests/test_isolate.py \
  tests/test_bind.py tests/test_validate_cache.py tests/test_upstream_manifest.py tests/test_cross_check.py tests/test_chain_shapes.py \
  tests/test_numba_lookback_default.py tests/test_numba_roles_default_attacks.py tests/test_one_pass.py \
  tests/test_first_use.py
run bench "${TB:-300}" "$PY" -m conformance bench --planner python "${BUILTINS[@]}" --planner "$UPSTREAM" \
  --repeat "${REPEAT:-1}" --json "$W/bench.json" --report "$W/bench.md"
run sandbox "${TS:-200}" bash -c "$PY -m pytest conformance/ -q -p no:cacheprovider --planner triton --isolate --results $W/sandbox-auto.json 2>&1 | tail -n 40; $PY -m pytest conformance/ -q -p no:cacheprovider --planner triton --isolate --sandbox namespace --case spec7-no-prefix --results $W/sandbox-namespace.json 2>&1 | tail -n 40"
run launcher-shape "${TL:-120}" "$PY" -m impls.offsets_planner.harness.sweeps.launcher_shape --planner triton \
  --planner triton-bound --planner numba-cuda --planner numba-cuda-bound --bs 1024
run entries-gpu "${TE:-200}" "$PY" -m pytest -q -p no:cacheprovider -rs tests/test_entries_gpu.py \
  tests/test_entries_planners.py
run one-pass "${TO:-420}" "$PY" -m impls.offsets_planner.harness.sweeps.one_pass --out "$W"
run memcheck-subjects "${TMS:-200}" compute-sanitizer --tool memcheck --error-exitcode 3 \
  --report-api-errors no --target-processes all "$PY" -m pytest conformance/ -q -p no:cacheprovider -n 0 \
  --subject entries-planner ${PIPELINE:+--subject canary-plan} --results "$W/memcheck-subjects.json"
[ -f "$W/memcheck-subjects.json" ] && "$PY" -m conformance report "$W/memcheck-subjects.json" \
  --format markdown --out "$W/memcheck-subjects.md"
run memo-cost "${TK:-120}" "$PY" -m impls.offsets_planner.harness.sweeps.memo_cost --device cuda
EB_EXTRA=()
[ -n "${UPSTREAM_ENTRIES:-}" ] && EB_EXTRA=(--upstream-entries "$UPSTREAM_ENTRIES")
run entries-bench "${TEB:-330}" "$PY" -m impls.entries_planner.harness.entries --out "$W" --device cuda \
  --budget-s "${EB_BUDGET:-240}" ${EB_EXTRA[@]+"${EB_EXTRA[@]}"}
# Results and bench files over 100 kB are kept gzipped (report and report --compare read .json.gz).
find "$W" -name "*.json" -size +100k -exec gzip -9n {} +
step "done"
tar -czf "$OUT/evidence.tgz" -C "$W" .
