"""Twenty-second hostile review, kept as tests: a planner that outlives its run, or writes its
worker's reply itself (planted: tests/planted/hostile22_daemons.py,
tests/planted/hostile22_probe_daemon.py, tests/planted/hostile22_replies.py).

Fooled before this review, fixed here:

* Without the PID namespace (``--sandbox none``, every GPU run by default, a kernel that refuses
  the namespaces) a ``setsid`` + double-fork daemon left by the module's first import in the
  availability probe outlived the run (the probe's process group was killed; the daemon was in
  none of it), and so did one that SIGKILLed the worker's shepherd (its subreaper) from a call.
  After pytest exited it rewrote the results file: exit status 1 on the terminal, but the file
  said ``complete``, exit status 0, every case ``pass``, and ``python -m conformance report``
  printed "0 not passing" and exited 0. pytest's process is now a child subreaper for a corpus
  run and kills those orphans before its final write (conformance/robustness/strays.py).
* A planner that wrote ``{"status": "crash"}`` to the worker's reply pipe (its descriptor is on
  the worker's command line) and then never returned hung the run past every timeout: the harness
  waited for the worker's exit without a limit after a crash reply
  (``WorkerProcess.await_exit`` now kills it after ``END_SECONDS``).
* The same kind of daemon left in ``python -m conformance fuzz``'s probe outlived fuzz and could
  empty its ``--out`` folder, the found cases (tests/planted/fuzz_probe_daemon.py): fuzz now
  adopts its orphans and kills them before it exits.
* A case file's own ``xfail`` matched planners by name pattern alone, so an external planner whose
  module was named to match a declaration made for another kernel (``upstream_h22`` for
  ``upstream*``) got its failure of that case as a strict xfail and a green run. An external
  planner now gets a case file's declaration only where the entry's ``sources`` list its code
  (its file's and its local imports' SHA-256, as a manifest's ``sources`` do); one that names it
  but not its code is not applied and is named in the warnings summary
  (conformance/corpus/case_xfail.py).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from tests.planner_folder_runs import ROOT, corpus_run, sha256_of

CASE = "spec7-prefill-and-decodes"


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


@pytest.mark.slow  # a corpus run each, about 15 s on 2 cores
@pytest.mark.parametrize("planner", ["tests.planted.hostile22_probe_daemon:launch",
                                     "tests.planted.hostile22_daemons:kills_its_reaper"])
def test_a_daemon_left_by_the_planner_cannot_rewrite_the_results_after_the_run(tmp_path, planner):
    """Fixed (the results file read ``complete``, exit status 0, the case ``pass``, and the
    report exited 0): the daemon is killed before the run's final write."""
    results, pidfile = tmp_path / "results.json", tmp_path / "daemon.pid"
    proc = corpus_run(None, results, "--planner", planner, "--case", CASE, "--sandbox", "none",
                      HOSTILE22_PIDFILE=str(pidfile))
    try:
        assert proc.returncode == 1, (proc.stdout + proc.stderr)[-3000:]
        assert pidfile.exists(), "the planted daemon never started: the attack is broken"
        pid = int(pidfile.read_text())
        deadline = time.monotonic() + 3  # what the daemon does after pytest's exit takes ms
        while _alive(pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not _alive(pid), "the planner's daemon outlived the run"
        doc = json.loads(results.read_text())
        assert (doc["complete"], doc["exitstatus"]) == (True, 1)
        assert [r["status"] for r in doc["results"]] == [
            "fail" if planner.endswith(":launch") else "crash"]
        report = subprocess.run([sys.executable, "-m", "conformance", "report", str(results),
                                 "--format", "text"], cwd=ROOT, capture_output=True, text=True,
                                timeout=120)
        assert report.stdout.startswith("1 result, 1 not passing"), report.stdout[:500]
    finally:
        if pidfile.exists() and _alive(int(pidfile.read_text())):
            os.kill(int(pidfile.read_text()), signal.SIGKILL)


def test_kill_strays_kills_an_adopted_daemon_and_spares_its_sessions_children():
    """conformance/robustness/strays.py in a process of its own: a daemon whose parent exited is
    adopted and killed; a child in the caller's own session (a pytest-xdist worker) is not."""
    code = textwrap.dedent("""
        import os, subprocess, sys, time
        from conformance.robustness import strays
        assert strays.adopt() is None
        own = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
        read, write = os.pipe()
        if os.fork() == 0:
            os.setsid()
            if os.fork():
                os._exit(0)
            os.write(write, str(os.getpid()).encode())
            time.sleep(30)
            os._exit(0)
        daemon = int(os.read(read, 32))
        time.sleep(0.2)
        os.waitpid(-1, os.WNOHANG)  # the daemon's first parent
        print(strays.kill_strays(), os.path.exists(f"/proc/{daemon}"), own.poll())
        own.kill()
    """)
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                          timeout=60)
    assert proc.stdout.split() == ["1", "False", "None"], proc.stdout + proc.stderr


@pytest.mark.parametrize("reaper_before", [False, True])
def test_in_process_fuzz_gives_its_caller_back_its_subreaper_setting(tmp_path, reaper_before):
    """``python -m conformance fuzz`` called in-process (as a test does) adopts the run's orphans
    (strays.py) and afterwards leaves its caller a child subreaper only where it was one."""
    code = textwrap.dedent(f"""
        import sys
        from conformance import cli
        from conformance.robustness import sandbox
        sandbox.child_subreaper({reaper_before})
        before = sandbox.is_child_subreaper()
        rc = cli.main(["fuzz", "--planner", "python", "--n", "3", "--no-progress",
                       "--out", sys.argv[1]])
        print(before, rc, sandbox.is_child_subreaper())
    """)
    proc = subprocess.run([sys.executable, "-c", code, str(tmp_path / "found")], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    assert proc.stdout.split()[-3:] == [str(reaper_before), "0", str(reaper_before)], (
        proc.stdout + proc.stderr)


@pytest.mark.slow  # a corpus run that waits out a worker's exit: about 20 s
def test_a_forged_crash_reply_from_a_call_that_never_returns_does_not_hang_the_run(tmp_path):
    """Fixed (the run hung past --isolate-timeout and every other limit): the worker that
    replied it crashed is killed when it does not exit, and the case is a ``crash``."""
    results = tmp_path / "results.json"
    started = time.monotonic()
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "pytest", "conformance/", "-p", "no:cacheprovider", "-q",
             "-p", "no:hypothesispytest", "--results", str(results), "--planner",
             "tests.planted.hostile22_replies:crash_reply_then_hangs", "--case", CASE,
             "--isolate-timeout", "5"],
            cwd=ROOT, capture_output=True, text=True, timeout=120,
            env={k: v for k, v in os.environ.items() if k != "PYTEST_ADDOPTS"})
    except subprocess.TimeoutExpired:
        pytest.fail(f"the run hung: no end after {time.monotonic() - started:.0f} s")
    assert proc.returncode == 1, (proc.stdout + proc.stderr)[-3000:]
    doc = json.loads(results.read_text())
    assert [(r["status"], doc["complete"]) for r in doc["results"]] == [("crash", True)]


@pytest.fixture(scope="module")
def borrowed_xfail(tmp_path_factory):
    """(exit status, {case id: status}, output) of one corpus run of ``upstream_h22:launch`` (the
    inclusive scan of tests/planted/wrong_planners.py, named by an entrant) on a folder of four
    copies of spec section 7's third example: one declaring ``"xfail": [{"planner": "upstream*"}]``
    (as cases/offsets-planner/README.md's example once did, for upstream's kernel), one declaring
    it with ``sources`` of other code, one with the entrant's own file among its ``sources``, and
    one declaring nothing."""
    tmp = tmp_path_factory.mktemp("borrowed")
    (tmp / "cases").mkdir()
    (tmp / "entrant").mkdir()
    entrant = tmp / "entrant" / "upstream_h22.py"
    entrant.write_text("from tests.planted.wrong_planners import off_by_one_scan as launch\n")
    doc = json.loads((ROOT / "cases/offsets-planner/spec/section7-examples.json").read_text())
    case = next(c for c in doc["cases"] if c["id"] == CASE)
    declared = {"planner": "upstream*", "reason": "upstream reads the next row"}
    doc["cases"] = [dict(case, id="h22-undeclared"),
                    dict(case, id="h22-declared-for-upstream", xfail=[declared]),
                    dict(case, id="h22-declared-for-other-code",
                         xfail=[{**declared, "sources": ["0" * 64]}]),
                    dict(case, id="h22-declared-for-this-code",
                         xfail=[{**declared, "sources": [sha256_of(entrant)]}])]
    (tmp / "cases" / "declared.json").write_text(json.dumps(doc))
    results = tmp / "results.json"
    proc = corpus_run(tmp / "entrant", results, "--cases", str(tmp / "cases"),
                      "--planner", "upstream_h22:launch")
    doc = json.loads(results.read_text())
    assert doc["complete"] is True, (proc.stdout + proc.stderr)[-3000:]
    return proc.returncode, {r["case"]: r["status"] for r in doc["results"]}, proc.stdout


@pytest.mark.slow
def test_the_entrant_fails_the_undeclared_copy(borrowed_xfail):
    """The mechanism, outside the hole: the planner is wrong on this case."""
    assert borrowed_xfail[1]["h22-undeclared"] == "fail"


@pytest.mark.slow
def test_a_case_files_xfail_is_not_borrowed_by_a_planner_named_to_match(borrowed_xfail):
    """Fixed (the declared copy read ``xfail``; run alone, its run exited 0): a case file's
    declaration reaches an external planner only where its ``sources`` list the planner's code
    (conformance/corpus/case_xfail.py), so the copies declared without them, or for other code,
    fail as the undeclared copy does, and the run names each declaration it did not apply. The
    entrant's own file among the ``sources`` still gets its declaration."""
    code, statuses, output = borrowed_xfail
    assert (code, statuses) == (1, {"h22-undeclared": "fail", "h22-declared-for-upstream": "fail",
                                    "h22-declared-for-other-code": "fail",
                                    "h22-declared-for-this-code": "xfail"})
    assert "XfailNotAppliedWarning: h22-declared-for-upstream[upstream_h22:launch]: the case's " \
           "xfail for 'upstream*' is not applied: the entry lists no sources" in output, output
    assert ("h22-declared-for-other-code[upstream_h22:launch]: the case's xfail for 'upstream*' "
            "is not applied: its code (its file or a local import) is not among the entry's "
            "sources") in output, output
    assert "h22-declared-for-this-code[upstream_h22:launch]: the case's xfail" not in output


FUZZ_WITHOUT_SANDBOX = """
import sys
from conformance.robustness import isolation
isolation.sandbox_mode = lambda option, cuda: ("none", "as on a GPU host")
from conformance.cli import main
sys.exit(main(sys.argv[1:]))
"""


@pytest.mark.slow  # a fuzz run of 2 plans, about 10 s on 2 cores
def test_a_daemon_left_in_the_fuzz_probe_does_not_outlive_the_fuzz_run(tmp_path):
    """Without a PID namespace (every GPU host; forced here), a daemon left by the planner's
    import in fuzz's availability probe emptied ``--out`` (the found cases) once fuzz had exited:
    now fuzz adopts its orphans and kills them before it exits. The found cases stay."""
    out, mark = tmp_path / "found", tmp_path / "daemon.mark"
    proc = subprocess.run(
        [sys.executable, "-c", FUZZ_WITHOUT_SANDBOX, "fuzz", "--planner",
         "tests.planted.fuzz_probe_daemon:launch", "--n", "2", "--out", str(out), "--no-progress",
         "--max-found", "1"], cwd=ROOT, capture_output=True, text=True, timeout=300,
        env={**os.environ, "FUZZ_DAEMON_MARK": str(mark), "PYTHONPATH": str(ROOT)})
    assert proc.returncode == 1, (proc.stdout + proc.stderr)[-3000:]  # it writes nothing
    found = sorted(p.name for p in out.iterdir())
    assert found and all(name.endswith(".json") for name in found), found
    time.sleep(2)  # the daemon's rounds are 20 ms
    assert not mark.exists(), "the probe's daemon outlived fuzz and emptied --out"
    assert sorted(p.name for p in out.iterdir()) == found


@pytest.mark.slow  # a fuzz run of 2 plans in this process, about 6 s on 2 cores
def test_fuzz_called_in_process_spares_its_callers_children_in_other_sessions(tmp_path):
    """fuzz kills the strays of its own run only: a child its caller started before, in a session
    of its own (as the corpus plugin's isolation workers are, in a pytest-xdist worker that then
    runs a test calling fuzz in-process), lives on. Killing it made those workers' cases fail at
    teardown ("exited with code 0 after the case's last call") in a fresh-clone run."""
    from conformance.cli import main as cli_main

    own = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"],
                           start_new_session=True)
    try:
        code = cli_main(["fuzz", "--planner", "python", "--n", "2", "--no-progress",
                         "--out", str(tmp_path / "found")])
        assert code == 0
        assert own.poll() is None, "fuzz killed its caller's child"
    finally:
        own.kill()
        own.wait()


NESTED_CORPUS_SESSION = """
import subprocess, sys
import pytest
own = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"],
                       start_new_session=True)
code = pytest.main(["conformance/", "-q", "-p", "no:cacheprovider", "--planner", "python",
                    "--case", sys.argv[1], "--isolate", "--results", sys.argv[2]])
alive = own.poll() is None
own.kill()
print("exit", int(code), "alive", alive)
"""


@pytest.mark.slow  # a corpus session of one isolated case, about 8 s on 2 cores
def test_a_corpus_session_run_in_process_spares_its_callers_children(tmp_path):
    """A corpus session's end kills the strays of its own run only (strays.py): a child its
    caller started before the session, in a session of its own, lives on. An in-process
    ``pytest.main`` of the corpus inside a pytest-xdist worker killed that worker's isolation
    workers (3 false teardown errors in a fresh-clone run)."""
    proc = subprocess.run([sys.executable, "-c", NESTED_CORPUS_SESSION, CASE,
                           str(tmp_path / "results.json")], cwd=ROOT, capture_output=True,
                          text=True, timeout=300)
    assert proc.stdout.strip().splitlines()[-1] == "exit 0 alive True", proc.stdout[-2000:]
