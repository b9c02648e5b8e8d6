"""Twenty-third hostile review, kept as tests: planners that try to get a green
``python -m conformance fuzz`` (planted: tests/planted/hostile23_*.py).

Fooled before this review, fixed here:

* A planner right while its call ran and wrong after it returned -- a daemon thread that writes
  into the outputs of a plan's last call (tests/planted/hostile23_late.py) -- read
  "divergences: 0" and exit status 0: fuzz never looked at what its workers did after a plan's
  last call (``pytest conformance/`` fails such a case at its teardown). Now those records are
  divergences of the plan they belong to (conformance/robustness/plan_divergence.py, fuzz.py).
* Without the sandbox (every GPU host by default) a planner's worker found the golden process in
  ``/proc``, stopped it, opened its pipes through ``/proc/<pid>/fd`` and answered every golden
  request with goldens recorded on its own wrong planner (tests/planted/hostile23_golden.py):
  "divergences: 0", exit status 0. The golden process now talks over a Unix socket (``/proc``
  cannot open one), makes itself non-dumpable and says it is ready before any planner's code
  runs; fuzz's own process is non-dumpable too (golden_process.py, fuzz_command.py).
* A planner's worker rewrote the found cases fuzz wrote under ``--out`` during the run, declaring
  them ``xfail`` so that the printed rerun command passes. fuzz now checks every file it wrote
  once every planner's process is gone, and exits 2 naming each one changed or removed
  (found_cases.changed_since).

Still fooled (strict xfails):

* As root without the sandbox the worker keeps ``CAP_SYS_PTRACE`` and takes the golden
  process's socket with ``pidfd_getfd`` (docs/robustness.md says root without the sandbox can
  reach the judge).
* A planner right on every table row length the fuzzer draws or its shrinker reaches (0, 3, 7,
  powers of two to 1024) and wrong on any other: fuzz's plans are a fixed distribution (and seed
  0 by default), so a planner that recognises them passes; the corpus judges other shapes.

Not fooled (the harness catches it): a planner module that patches the reference and the
comparison at import (fuzz never imports it; with and without ``--isolate``), one that prints a
green summary line from its probe and its calls (none reaches fuzz's output), one that exits 0
from its call, one that hangs (a ``timeout``), and one whose worker exits after the call (a
``crash`` of its next plan, now of its own).
"""

from __future__ import annotations

import copy
import hashlib
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from tests.planner_folder_runs import ROOT

CPU_STORAGES = pytest.mark.skipif(
    torch.cuda.is_available(),
    reason="fuzz plans on CUDA tensors here, and CUDA storages are not read again after a "
           "plan's last call (conformance/robustness/late_writes.py): a late write is not seen")

NO_SANDBOX = """
import sys
from conformance.robustness import isolation
isolation.sandbox_mode = lambda option, cuda: ("none", "as on a GPU host")
from conformance.cli import main
sys.exit(main(sys.argv[1:]))
"""


def _fuzz(tmp_path: Path, planner: str, *args: str, n: int = 3, sandbox: bool = True,
          env: dict | None = None) -> tuple[int, str, str, int]:
    """(exit status, stdout, stderr, divergences counted) of a fuzz run of ``planner``."""
    head = ["-m", "conformance"] if sandbox else ["-c", NO_SANDBOX]
    proc = subprocess.run(
        [sys.executable, *head, "fuzz", "--planner", planner, "--n", str(n), "--no-progress",
         "--out", str(tmp_path / "found"), "--max-found", "0", *args],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
        env={**os.environ, "PYTHONPATH": str(ROOT), **(env or {})})
    found = re.search(r"\(external\) (\d+); [\d.]+ s$", proc.stdout.strip().splitlines()[-1]
                      if proc.stdout.strip() else "")
    return proc.returncode, proc.stdout, proc.stderr, int(found.group(1)) if found else -1


@pytest.mark.slow  # a fuzz run, about 15 s on 2 cores
@pytest.mark.parametrize("planner", [pytest.param("late_write", marks=CPU_STORAGES), "late_exit"])
def test_what_a_planner_does_after_its_last_call_is_a_divergence(tmp_path, planner):
    """Fixed for ``late_write`` (0 divergences, exit status 0): a write after the plain run's
    call returned is read when the next plan begins, or after the linger at the end."""
    code, out, err, count = _fuzz(tmp_path, f"tests.planted.hostile23_late:{planner}", n=6)
    assert (code, count > 0) == (1, True), (out + err)[-3000:]


@pytest.mark.slow
@CPU_STORAGES
def test_a_late_write_is_written_as_a_found_case_with_the_reason(tmp_path):
    """The late failure is written unshrunk (a shrink would lose it), saying what happened."""
    code, out, err, _ = _fuzz(tmp_path, "tests.planted.hostile23_late:late_write",
                              "--max-found", "3", n=4)
    assert code == 1, (out + err)[-3000:]
    texts = [p.read_text() for p in (tmp_path / "found").glob("found-*.json")]
    assert any("after last call: fail (write-inside)" in t for t in texts), texts
    assert "--isolate" in out


@pytest.mark.slow
def test_a_planner_cannot_answer_the_golden_requests_through_proc(tmp_path):
    """Fixed (0 divergences, exit status 0 without the sandbox): the golden process's socket
    cannot be opened through /proc, so the planner is left wrong on every plan."""
    code, out, err, count = _fuzz(tmp_path, "tests.planted.hostile23_golden:launch",
                                  sandbox=False)
    assert (code, count) == (1, 3), (out + err)[-3000:]


@pytest.mark.slow
@pytest.mark.xfail(os.geteuid() == 0, strict=True, reason="hole: as root without the sandbox "
                   "the worker keeps CAP_SYS_PTRACE, so PR_SET_DUMPABLE 0 does not stop "
                   "pidfd_getfd(2) taking the golden process's socket (or ptrace); every GPU "
                   "run is without the sandbox by default. The fix is the sandbox "
                   "(--sandbox namespace where CUDA IPC works) or dropping the worker's "
                   "capabilities without it")
def test_a_root_planner_cannot_take_the_golden_socket_with_pidfd_getfd(tmp_path):
    code, out, err, count = _fuzz(tmp_path, "tests.planted.hostile23_golden:launch_getfd",
                                  sandbox=False)
    assert (code, count) == (1, 3), (out + err)[-3000:]


@pytest.mark.slow
def test_a_found_case_rewritten_during_the_run_fails_the_run(tmp_path):
    """Fixed (exit status 1 and "written to X", X then declared ``xfail`` by the planner, so its
    rerun passed): fuzz exits 2 naming the file."""
    out_dir = tmp_path / "found"
    code, out, err, count = _fuzz(tmp_path, "tests.planted.hostile23_planners:"
                                  "rewrites_found_cases", "--max-found", "1", n=30,
                                  env={"HOSTILE23_OUT": str(out_dir)})
    written = sorted(out_dir.glob("found-*.json"))
    assert written and all("xfail" in p.read_text() for p in written), "the attack is broken"
    assert (code, count) == (2, 30), (out + err)[-3000:]
    assert f"{written[0]}: rewritten" in err


def test_changed_since_names_a_rewritten_and_a_removed_case(tmp_path):
    from conformance.robustness.found_cases import Placed, changed_since

    kept, rewritten, removed = (tmp_path / f"{n}.json" for n in ("kept", "rewritten", "removed"))
    placed = []
    for path in (kept, rewritten, removed):
        path.write_text("{}\n")
        placed.append(Placed(path, True, hashlib.sha256(b"{}\n").hexdigest()))
    rewritten.write_text('{"xfail": []}\n')
    removed.unlink()
    placed.append(Placed(tmp_path / "not-ours.json", False))  # left as it was: not checked
    assert [line.split(":")[0] for line in changed_since(placed)] == [str(rewritten),
                                                                       str(removed)]


def test_the_golden_process_is_ready_non_dumpable_and_its_socket_cannot_be_opened():
    from conformance.robustness.golden_process import GoldenProcess
    from conformance.robustness.random_plans import random_plan

    golden = GoldenProcess()
    try:
        pid = golden._proc.pid
        # it said it is ready, so it is non-dumpable: the kernel gives its /proc files to root
        assert os.stat(f"/proc/{pid}/environ").st_uid == 0
        for fd in (0, 1):
            assert os.readlink(f"/proc/{pid}/fd/{fd}").startswith("socket:")
            with pytest.raises(OSError):
                open(f"/proc/{pid}/fd/{fd}", "rb").close()
        assert golden.expectations(random_plan(0, 1))  # and it still records
    finally:
        golden.close()


@pytest.mark.slow
@pytest.mark.parametrize("isolate", [[], ["--isolate"]])
def test_a_planner_that_patches_the_judge_at_import_patches_nothing_fuzz_reads(tmp_path,
                                                                               isolate):
    code, out, err, count = _fuzz(tmp_path, "tests.planted.hostile23_patches:patches_the_judge",
                                  *isolate)
    assert (code, count) == (1, 3), (out + err)[-3000:]


@pytest.mark.slow
def test_a_green_summary_printed_by_the_planner_reaches_no_output(tmp_path):
    from tests.planted.hostile23_prints import FAKE

    code, out, err, count = _fuzz(tmp_path, "tests.planted.hostile23_prints:launch")
    assert (code, count) == (1, 3), (out + err)[-3000:]
    assert FAKE not in out and FAKE not in err


@pytest.mark.slow
@pytest.mark.parametrize("planner, args", [("exits_zero", []),
                                           ("hangs", ["--isolate-timeout", "2"])])
def test_a_planner_that_exits_or_hangs_in_its_call_diverges(tmp_path, planner, args):
    code, out, err, count = _fuzz(tmp_path, f"tests.planted.hostile23_planners:{planner}",
                                  *args, n=2)
    assert (code, count) == (1, 2), (out + err)[-3000:]


def test_the_fuzz_shapes_planner_is_wrong_on_another_row_length():
    """The mechanism outside the hole: on a table of 100-token rows the planner diverges."""
    from conformance.engine.runner import ConformanceFailure, Target, run_case
    from conformance.robustness.plan_divergence import with_golden
    from conformance.robustness.random_plans import random_plan
    from tests.planted.hostile23_planners import fuzz_shapes_only

    raw = copy.deepcopy(random_plan(0, 1))
    raw["inputs"]["req_to_token"] = {"generator": "linear", "max_reqs": 4, "max_seq_len": 100}
    raw["inputs"].update(req_pool_indices=[1, 2], prefix_lens=[5, 0], extend_seq_lens=[1, 3],
                         lut=None, swa_window_size=0)
    raw["inputs"].pop("verify_capacity", None)
    raw["inputs"].pop("write_req_capacity", None)
    case, _ = with_golden(raw)
    with pytest.raises(ConformanceFailure):
        run_case(case, Target("fuzz_shapes_only", fuzz_shapes_only, "cpu"))


@pytest.mark.slow
@pytest.mark.xfail(strict=True, reason="hole: fuzz's plans are a fixed distribution (table rows "
                   "of 0, 7 or a power of two up to 1024 elements, halved by the shrinker; seed "
                   "0 by default), so a planner that recognises them is right on every plan and "
                   "wrong on the shapes a server uses; only the corpus judges those")
def test_a_planner_right_only_on_the_fuzzers_shapes_diverges(tmp_path):
    code, out, err, count = _fuzz(tmp_path, "tests.planted.hostile23_planners:fuzz_shapes_only",
                                  n=20)
    assert (code, count > 0) == (1, True), (out + err)[-3000:]
