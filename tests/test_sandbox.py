"""Attacks on the judge's process from the isolation worker (planners in
``tests/planted/sandbox_attacks.py``), each with the verdict it must get, from one
``pytest conformance/`` run shared by the assertions below; and the sandbox's pieces
(:mod:`conformance.robustness.sandbox`) on their own:

* SIGSTOP to pytest found among the worker's ancestors: in a PID namespace there is no pytest to
  find, the case fails, the run ends with its summary;
* writing pytest's or the shepherd's ``/proc/<pid>/mem``: denied (non-dumpable, and no capability
  outside the worker's user namespace);
* a ``setsid`` + double-fork daemon that forges the results file: its write during the run is
  overwritten by the final one (from pytest's memory), and it dies with its worker, before that
  final write, so nothing rewrites the file after pytest exits.
"""

from __future__ import annotations

import functools
import json
import os
import subprocess
import sys
import textwrap
import time

import pytest
import torch

from conformance.robustness import sandbox
from conformance.robustness.isolation import WorkerPool, sandbox_mode
from tests.subproc import REPO, run_pytest

AT_IMPORT = "tests.planted.stops_judge_at_import"
ATTACKS = "tests.planted.sandbox_attacks"
CASE = "spec7-no-prefix"
PROBE = textwrap.dedent("""
    import os, sys
    from conformance.robustness import sandbox
    why = sandbox.new_user_pid_namespaces()
    if why:
        print(why); sys.exit(1)
    pid = os.fork()
    if pid == 0:
        why = sandbox.private_proc() or sandbox.drop_capabilities()
        os._exit(3 if why or os.getpid() != 1 else 0)
    sys.exit(os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]))
""")


def namespaces_here() -> bool:
    """Whether this kernel lets this user make the worker's namespaces (measured, in a child)."""
    proc = subprocess.run([sys.executable, "-c", PROBE], cwd=REPO, capture_output=True, timeout=60)
    return proc.returncode == 0


NAMESPACES = sys.platform == "linux" and namespaces_here()
CUDA = torch.cuda.is_available()  # external planners then get CUDA tensors: no namespaces (auto)
SANDBOXED = NAMESPACES and not CUDA
"""Whether the shared run's workers get the namespaces (``--sandbox auto``)."""
needs_namespaces = pytest.mark.skipif(not SANDBOXED, reason="no user + PID namespaces for this "
                                      "run's workers (kernel refused, or CUDA): it falls back")


@pytest.fixture(scope="module")
def sandboxed(tmp_path_factory):
    """One run of every sandbox attack on one case: (process, items, results, marks folder,
    the results file's text right after pytest exited)."""
    tmp = tmp_path_factory.mktemp("sandbox")
    marks = tmp / "marks"
    marks.mkdir()
    planners = ["pokes_judge_memory", "leaves_daemon"] + (["stops_judge"] if SANDBOXED else [])
    args = [arg for p in planners for arg in ("--planner", f"{ATTACKS}:{p}")]
    if SANDBOXED:  # its top level stops pytest from the availability probe where unsandboxed
        args += ["--planner", f"{AT_IMPORT}:launch"]
    os.environ["CONFORMANCE_SANDBOX_MARKS"] = str(marks)
    os.environ["CONFORMANCE_PLANTED_RESULTS"] = str(tmp / "results.json")
    try:
        proc, items = run_pytest(tmp, *args, "--case", CASE, "--isolate-timeout", "20",
                                 timeout=300)
    finally:
        del os.environ["CONFORMANCE_SANDBOX_MARKS"], os.environ["CONFORMANCE_PLANTED_RESULTS"]
    text = (tmp / "results.json").read_text()
    return proc, items, json.loads(text), marks, text


def _marks(marks, planner: str) -> list[str]:
    path = marks / planner
    return path.read_text().splitlines() if path.exists() else []


@pytest.mark.slow  # the sandbox attack battery: one run of a worker per attack, about 30 s on 2 cores
def test_every_attack_fails_its_case_and_the_run_ends_with_its_summary(sandboxed):
    proc, items, results, _, _ = sandboxed
    assert proc.returncode == 1, proc.stdout[-3000:] + proc.stderr[-2000:]
    assert proc.stdout.count("conformance summary") == 1
    assert results["complete"] is True and results["exitstatus"] == 1
    status = {r["planner"]: r["status"] for r in results["results"]}
    assert set(status.values()) == {"fail"}, status
    assert len(status) == (4 if SANDBOXED else 2)
    for planner in status:
        assert "out_verify_num_valid: 1 element(s) differ" in items[f"{CASE}[{planner}]"].text


@pytest.mark.slow  # the sandbox attack battery: one run of a worker per attack, about 30 s on 2 cores
def test_the_fingerprint_and_the_summary_say_what_the_workers_ran_in(sandboxed):
    proc, _, results, _, _ = sandboxed
    where = results["fingerprint"]["sandbox"]
    assert results["fingerprint"]["judge"] == "non-dumpable"
    if SANDBOXED:
        assert where == sandbox.NAMESPACE
    else:
        assert where.startswith("none: CUDA IPC" if CUDA else "none: ")
    assert f"isolation sandbox: {where}; judge non-dumpable" in proc.stdout


@pytest.mark.slow  # the sandbox attack battery: one run of a worker per attack, about 30 s on 2 cores
@needs_namespaces
def test_a_worker_finds_no_pytest_to_stop(sandboxed):
    _, _, _, marks, _ = sandboxed
    lines = _marks(marks, "stops_judge")  # once per call of the case
    assert lines and set(lines) == {"umount /proc: Operation not permitted",
                                    "no pytest among my ancestors"}, lines


@pytest.mark.slow  # the sandbox attack battery: one run of a worker per attack, about 30 s on 2 cores
@needs_namespaces
def test_a_module_top_level_finds_no_pytest_to_stop_from_the_probe_nor_the_worker(sandboxed):
    proc, _, results, marks, _ = sandboxed
    lines = _marks(marks, "stops_judge_at_import")  # the probe's import, then the worker's
    assert len(lines) >= 4 and set(lines) == {"umount /proc: Operation not permitted",
                                              "no pytest among my ancestors"}, lines


@pytest.mark.slow  # the sandbox attack battery: one run of a worker per attack, about 30 s on 2 cores
def test_a_worker_cannot_write_the_judges_memory(sandboxed):
    _, _, _, marks, _ = sandboxed
    lines = _marks(marks, "pokes_judge_memory")  # three per call of the case
    if CUDA and os.geteuid() == 0:
        pytest.xfail("on CUDA the worker runs outside the namespaces and keeps root's "
                     f"CAP_SYS_PTRACE, which non-dumpable does not stop ({sorted(set(lines))})")
    # without the namespaces (kernel refused) the worker still drops its capabilities
    assert lines and set(lines) == {
        "umount /proc: Operation not permitted" if SANDBOXED else
        "umount /proc: skipped (not in a sandbox)",
        "pytest: " + ("not found" if SANDBOXED else "denied (PermissionError: Permission denied)"),
        "shepherd: denied (PermissionError: Permission denied)"}, lines


@pytest.mark.slow  # the sandbox attack battery: one run of a worker per attack, about 30 s on 2 cores
def test_a_daemon_dies_with_its_worker_and_never_forges_the_results(sandboxed):
    _, _, results, marks, text = sandboxed
    lines = _marks(marks, "leaves_daemon")
    assert "daemon: wrote during the run" in lines  # the attack ran ...
    assert "daemon: rewrote the final results" not in lines  # ... and never saw the final write
    assert "forged_by" not in results
    beats = len(lines)
    time.sleep(1.0)  # a live daemon beats every 0.1 s
    assert len(_marks(marks, "leaves_daemon")) == beats
    assert (marks.parent / "results.json").read_text() == text


# ---- the pieces, without a pytest run ----------------------------------------------------------


def test_sandbox_mode_keeps_cuda_workers_out_of_pid_namespaces():
    assert sandbox_mode("auto", cuda=False) == ("namespace", None)
    mode, why = sandbox_mode("auto", cuda=True)
    assert mode == "none" and "CUDA IPC" in why
    assert sandbox_mode("namespace", cuda=True) == ("require", None)
    assert sandbox_mode("none", cuda=False) == ("none", "--sandbox none")


@pytest.mark.parametrize("option, cuda, expected", [
    ("none", False, "none: --sandbox none"),
    ("auto", True, "none: CUDA IPC handles are not known to open across PID namespaces on "
                   "every driver (--sandbox namespace to try: they do on an H200, driver "
                   "580.159, reports/gpu/2026-12-02-b)"),
    ("auto", False, sandbox.NAMESPACE if NAMESPACES else None),
])
def test_a_worker_says_what_it_runs_in(option, cuda, expected):
    pool = WorkerPool(sandbox=option)
    pool.sandbox, pool.off_reason = sandbox_mode(option, cuda)
    worker = pool.get("python")
    try:
        worker.ensure_ready()
        if expected is None:
            assert worker.where.startswith("none: "), worker.where
        else:
            assert worker.where == expected
        assert worker.tampered() is None
        with open(f"/proc/{worker.watched}/status") as handle:
            assert "State:\tS" in handle.read()  # the shepherd, waiting
    finally:
        pool.close()
    assert pool.sandboxes() == {"python": worker.where}


def test_a_subreaper_kills_the_daemon_it_adopted():
    script = textwrap.dedent("""
        import os, time
        from conformance.robustness import sandbox
        assert sandbox.child_subreaper() is None
        child = os.fork()
        if child == 0:
            os.setsid()
            if os.fork() == 0:
                time.sleep(60)
            os._exit(0)
        os.waitpid(child, 0)
        time.sleep(0.2)
        adopted = sandbox.children()
        print(len(adopted), sandbox.kill_children(), sandbox.children())
    """)
    proc = subprocess.run([sys.executable, "-c", script], cwd=REPO, capture_output=True,
                          text=True, timeout=60)
    assert proc.stdout.split() == ["1", "1", "[]"], proc.stdout + proc.stderr


def test_non_dumpable_is_this_process_s_own_flag():
    script = ("from conformance.robustness import sandbox\n"
              "print(sandbox.is_dumpable(), sandbox.non_dumpable(), sandbox.is_dumpable())")
    proc = subprocess.run([sys.executable, "-c", script], cwd=REPO, capture_output=True,
                          text=True, timeout=60)
    assert proc.stdout.split() == ["True", "None", "False"], proc.stdout + proc.stderr


if sys.platform != "linux":  # /proc, prctl, unshare
    pytestmark = pytest.mark.skip(reason="the sandbox is Linux's")


@functools.cache
def _forged_probe() -> tuple[str, dict]:
    """(mode, source digest) the registry gives ``tests/planted/forges_probe.py``, whose child
    prints a forged answer after the probe exited (one probe for both tests below)."""
    code = textwrap.dedent("""
        import json
        from impls.offsets_planner.registry import availability, source_digest
        name = "tests.planted.forges_probe:launch"
        print(json.dumps([availability(name).mode, source_digest(name)]))
    """)
    env = dict(os.environ, CONFORMANCE_FORGE_PROBE="1")
    proc = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True,
                          timeout=120, env=env)
    return tuple(json.loads(proc.stdout.splitlines()[-1]))


def test_the_source_digest_is_read_by_the_harness_not_taken_from_the_probe():
    """The probe's answer is the module's word (a child of it printed the last answer line); the
    digest is of the module's file as the harness's process finds and reads it."""
    import hashlib

    _, source = _forged_probe()
    path = REPO / "tests" / "planted" / "forges_probe.py"
    assert "tests.planted" in {e["module"] for e in source.pop("imports")}  # its packages' files
    assert source == {"module": "tests.planted.forges_probe",
                      "file": "tests/planted/forges_probe.py",
                      "sha256": hashlib.sha256(path.read_bytes()).hexdigest()}


@pytest.mark.xfail(strict=True, reason="the probe's mode (external, triton compiled or "
                   "interpreted) is the module's own word: the last conformance-probe: line of a "
                   "process the module runs in, which its top level can rewrite or a child of it "
                   "print after the probe exited (informational: no verdict reads it)")
def test_the_probe_mode_cannot_be_forged_by_the_module():
    mode, _ = _forged_probe()
    assert mode == "external", mode
