"""What isolation guarantees, each shown on a planted planner (tests/planted/):

* a planner that ends the process (``os._exit(0)``) or raises KeyboardInterrupt mid-corpus fails
  that case, and the run ends red with its summary; an external planner runs in a child even under
  ``--no-isolate``;
* a case that leaves process-global torch state changed is reported, and the next case is clean;
* one worker per planner; the worker dies with its parent, leaving no temporary file;
* the worker protocol starts with a version handshake; ``--isolate-timeout`` refuses values <= 0.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from conformance.robustness.isolated_case import case_request, judge_observed
from conformance.robustness.isolation import WorkerPool, worker_env
from conformance.robustness.worker_process import WorkerUnavailable
from tests.subproc import REPO, run_pytest
from tests.test_isolate import isolation_corpus, load_isolation_corpus

PLAIN = ["-k", "iso-a-plain or iso-e-plain or iso-d-hazard-ok"]
"""iso-a-plain (prefix 7) sets off the planted planners; the other two must still pass."""

SAME_PATH = pytest.mark.slow
"""The second isolation option of a test whose planner is external: it runs in a child under
either option (the default run keeps one; ``pytest -m slow`` the other, about 10 s each)."""


def _run(tmp_path: Path, planner: str, *args: str):
    cases = isolation_corpus(tmp_path / "cases")
    proc, items = run_pytest(tmp_path, "--cases", str(cases), "--planner", planner, *PLAIN, *args)
    outcome = {name.split("[")[0]: item for name, item in items.items()}
    results = json.loads((tmp_path / "results.json").read_text())
    return proc, outcome, results


@pytest.mark.parametrize("isolation", [[], pytest.param(["--no-isolate"], marks=SAME_PATH)],
                         ids=["default", "no-isolate"])
def test_os_exit_zero_mid_corpus_fails_its_case_and_the_run_is_red(tmp_path, isolation):
    proc, outcome, results = _run(tmp_path, "tests.planted.crash_planners:exits_zero", *isolation)
    assert proc.returncode == 1, proc.stdout[-2000:]
    assert {k: v.outcome for k, v in outcome.items()} == {
        "iso-a-plain": "failed", "iso-d-hazard-ok": "passed", "iso-e-plain": "passed"}
    text = outcome["iso-a-plain"].text
    # an external planner runs in a child even under --no-isolate: its code never runs in pytest's
    assert "crash (isolated): exited with code 0" in text
    if isolation:
        words = " ".join(proc.stdout.split())  # the note wraps within 120 columns
        assert ("isolation: tests.planted.crash_planners:exits_zero ran in a child all the same "
                "(--no-isolate applies to built-in planners") in words
    assert "conformance summary" in proc.stdout
    assert results["complete"] is True and results["exitstatus"] == 1


@pytest.mark.parametrize("isolation", [[], pytest.param(["--no-isolate"], marks=SAME_PATH)],
                         ids=["default", "no-isolate"])
def test_keyboard_interrupt_from_a_planner_fails_only_its_case(tmp_path, isolation):
    proc, outcome, results = _run(tmp_path, "tests.planted.crash_planners:interrupts", *isolation)
    assert proc.returncode == 1, proc.stdout[-2000:]
    assert {k: v.outcome for k, v in outcome.items()} == {
        "iso-a-plain": "failed", "iso-d-hazard-ok": "passed", "iso-e-plain": "passed"}
    assert ("raised KeyboardInterrupt('planted') during the case: a launcher returns or raises "
            "an Exception (spec section 3)") in outcome["iso-a-plain"].text
    assert "!!!!! KeyboardInterrupt" not in proc.stdout  # pytest's "interrupted" banner
    assert results["complete"] is True


@pytest.mark.parametrize("isolation", [pytest.param(["--isolate"], marks=SAME_PATH),
                                       ["--no-isolate"]], ids=["isolate", "no-isolate"])
def test_changed_global_torch_state_is_reported_and_the_next_case_is_clean(tmp_path, isolation):
    proc, outcome, _ = _run(tmp_path, "tests.planted.hostile_planners:leaves_meta_device",
                            *isolation)
    assert proc.returncode == 1
    assert {k: v.outcome for k, v in outcome.items()} == {
        "iso-a-plain": "failed", "iso-d-hazard-ok": "passed", "iso-e-plain": "passed"}
    text = outcome["iso-a-plain"].text
    assert "changed process-global torch state" in text, text  # the whole report on a failure
    assert "default device: cpu -> meta" in text, text


def _case(case_id: str = "iso-e-plain"):
    cases, faults = load_isolation_corpus(Path(tempfile.mkdtemp()) / "cases")
    assert not faults
    return next(c for c in cases if c.id == case_id)


def _request(case_id: str = "iso-e-plain", planner: str = "python") -> dict:
    return case_request(_case(case_id), planner, "cpu")


def test_one_worker_per_planner():
    pool = WorkerPool()
    try:
        a = pool.get("python")
        b = pool.get("tests.planted.crash_planners:crashy")
        assert a is pool.get("python") and a is not b
        for w in (a, b):
            answer = w.run(_request(planner=w.planner), timeout=120)
            assert answer["status"] == "observed" and answer["state_changed"] == [], answer
            judge_observed(_case(), w.planner, answer)  # raises on any difference
        assert a.pid != b.pid and {a.pid, b.pid} <= {int(p) for p in os.listdir("/proc")
                                                     if p.isdigit()}
    finally:
        pool.close()


def test_worker_refuses_another_protocol_version():
    from conformance.robustness.isolation_worker import PROTOCOL
    from conformance.robustness.worker_socket import socket_pair

    env = worker_env("python", cuda=False)
    read_end, write_end = os.pipe()
    ours, theirs = socket_pair()
    proc = subprocess.Popen([sys.executable, "-m", "conformance.robustness.isolation_worker",
                             "--reply-fd", str(write_end), "--sock-fd", str(theirs.fileno())],
                            stdin=subprocess.PIPE, pass_fds=(write_end, theirs.fileno()), env=env,
                            cwd=REPO)
    os.close(write_end)
    theirs.close()
    proc.stdin.write(b'{"hello": {"protocol": 1}}\n')
    proc.stdin.flush()
    with os.fdopen(read_end) as reply:
        answer = json.loads(reply.readline())
    assert proc.wait(timeout=60) == 2  # the worker's exit status, passed on by its shepherd
    ours.close()
    assert answer == {"refused": f"isolation worker speaks protocol {PROTOCOL}, the parent 1: "
                                 "both must come from the same checkout"}


def test_a_worker_that_never_shakes_hands_is_reported():
    pool = WorkerPool(prefix=[sys.executable, "-c", "import sys; print('no worker here')", "--"])
    try:
        with pytest.raises(WorkerUnavailable, match="did not start: it exited before its "
                                                    "handshake\nno worker here"):
            pool.get("python").run(_request(), timeout=30)
    finally:
        pool.close()


PARENT = """
import os, signal, sys, threading, time
from conformance.corpus.loader import load_corpus
from conformance.robustness.isolated_case import case_request
from conformance.robustness.isolation import WorkerPool
from pathlib import Path
case = next(c for c in load_corpus([Path(sys.argv[1])])[0] if c.id == "iso-c-hang")
worker = WorkerPool().get("tests.planted.crash_planners:crashy")
worker.ensure_ready()
print(worker.pid, os.readlink(f"/proc/self/fd/{worker.log}"), flush=True)
request = case_request(case, worker.planner, "cpu")
threading.Thread(target=worker.run, args=(request, 60), daemon=True).start()
time.sleep(1.5)  # the child is now spinning in the planted hang
os.kill(os.getpid(), signal.SIGKILL)
"""


def test_worker_dies_with_a_parent_killed_mid_case_and_leaves_no_file(tmp_path):
    cases = isolation_corpus(tmp_path / "cases")
    parent = subprocess.run([sys.executable, "-c", PARENT, str(cases)], cwd=REPO,
                            env=worker_env("python", cuda=False), capture_output=True, text=True,
                            timeout=120)
    assert parent.returncode == -signal.SIGKILL, parent.stderr
    pid, log = parent.stdout.split(maxsplit=1)
    assert log.strip().endswith("(deleted)")  # the log never had a name in the file system
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and _alive(int(pid)):
        time.sleep(0.1)
    assert not _alive(int(pid)), f"worker {pid} outlived its parent"


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return False
    return state not in ("Z", "X")  # a zombie has died; only its exit status is left


@pytest.mark.parametrize("value", ["0", pytest.param("-1", marks=SAME_PATH),
                                   pytest.param("nan", marks=SAME_PATH), "soon"])
def test_isolate_timeout_refuses_values_that_are_not_positive(tmp_path, value):
    proc, _ = run_pytest(tmp_path, "--isolate-timeout", value, "--planner", "python")
    assert proc.returncode == 4
    error = [ln for ln in proc.stderr.splitlines() if "argument --isolate-timeout" in ln]
    why = f"{value!r} is not a number of seconds" if value == "soon" else \
        f"{value!r}: must be a number of seconds > 0"
    assert len(error) == 1 and error[0].endswith(f"error: argument --isolate-timeout: {why}")
    assert "Traceback" not in proc.stderr


@pytest.mark.parametrize("planner", ["patches_judge", "edits_golden"])
def test_a_planner_gaming_its_evaluation_is_caught_even_under_no_isolate(tmp_path, planner):
    # Before, --no-isolate ran an external planner in pytest's process, where both passed.
    name = f"tests.planted.hostile_planners:{planner}"
    proc, outcome, _ = _run(tmp_path, name, "--no-isolate", "-k", "iso-e-plain")
    assert {k: v.outcome for k, v in outcome.items()} == {"iso-e-plain": "failed"}
    text = outcome["iso-e-plain"].text
    field = "out_verify_offsets_scratch" if planner == "patches_judge" else \
        "out_write_num_valid_reqs"
    assert f"{field}:" in text and "differ" in text, text
    assert proc.returncode == 1


def test_a_worker_killed_between_cases_is_a_death_of_its_last_case():
    """The worker's death after its case's last call (here: SIGSEGV from outside, as a planner's
    thread would send it) is found before the next case begins and recorded as the last case's,
    not the next one's; a death the harness caused (kill) is nobody's."""
    pool = WorkerPool()
    try:
        w = pool.get("python")
        assert w.run(_request(), timeout=120, owner="first")["status"] == "observed"
        os.kill(w.pid, signal.SIGSEGV)
        w.proc.wait(timeout=30)
        answer = w.run(_request(), timeout=120, owner="second")
        assert answer["status"] == "observed", answer  # a fresh worker ran the second case
        deaths = w.take_deaths()
        assert [d["owner"] for d in deaths] == ["first"]
        assert "killed by signal 11 (SIGSEGV)" in deaths[0]["reason"]
        assert "before the next case began" in deaths[0]["reason"]
        w.kill()
        w.spawn()
        assert w.take_deaths() == []
        assert pool.close() == []
    finally:
        pool.close()


def test_a_worker_ending_with_another_code_when_told_is_a_death_of_its_last_case():
    """At the pool's close the worker is told to end (stdin EOF); an exit code other than 0 (here:
    the planner replaced ``os._exit``) is the last case's death, named with its planner."""
    pool = WorkerPool()
    try:
        w = pool.get("tests.planted.crash_planners:exits_badly_at_exit")
        request = _request(planner=w.planner)
        assert w.run(request, timeout=120, owner="last")["status"] == "observed"
        deaths = pool.close()
        assert [(d["owner"], d["planner"]) for d in deaths] == [("last", w.planner)]
        assert deaths[0]["reason"].startswith("the worker exited with code 7 after the case's "
                                              "last call"), deaths
        assert "when it was told to end" in deaths[0]["reason"]
    finally:
        pool.close()


@pytest.mark.parametrize("value", ["-1", pytest.param("nan", marks=SAME_PATH),
                                   pytest.param("inf", marks=SAME_PATH)])
def test_isolate_linger_refuses_values_that_are_not_seconds_at_least_zero(tmp_path, value):
    proc, _ = run_pytest(tmp_path, "--isolate-linger", value, "--planner", "python")
    assert proc.returncode == 4
    error = [ln for ln in proc.stderr.splitlines() if "argument --isolate-linger" in ln]
    assert len(error) == 1 and error[0].endswith(
        f"error: argument --isolate-linger: {value!r}: must be a number of seconds >= 0"), error


def test_a_write_into_an_output_after_the_cases_last_call_fails_that_case_not_the_next():
    """A thread writes into ``out_write_offsets[0]`` 0.2 s after the case's last call: the case's
    storages, kept after it ended, are read once more when the next case begins
    (conformance/robustness/late_writes.py): a ``fail`` of the first case, with the value."""
    from tests.planted.hostile11_guard import SMEAR

    pool = WorkerPool()
    try:
        w = pool.get("tests.planted.hostile11_guard:late_write_inside_an_output")
        assert w.run(_request(planner=w.planner), timeout=120, owner="first")["status"] == \
            "observed"
        time.sleep(1.0)  # the thread has written
        assert w.run(_request(planner=w.planner), timeout=120, owner="second")["status"] == \
            "observed"
        deaths = w.take_deaths()
        assert [(d["owner"], d["status"]) for d in deaths] == [("first", "fail")], deaths
        assert f"out_write_offsets[0] (inside it): 0 -> {SMEAR}" in deaths[0]["reason"], deaths
    finally:
        pool.close()


@pytest.mark.parametrize("reply", [{"status": "ended", "state_changed": ["default device"]},
                                   {"status": "crash", "reason": "signal 11"}])
def test_a_reply_after_which_the_worker_ends_itself_is_no_sign_of_a_dead_parent(reply):
    """After a reply of changed torch state or of a crash the worker ends itself (os._exit(3)) and
    its shepherd follows: the harness must not read the shepherd's death as the planner killing
    its parent (a race a loaded machine loses: the case read ``crash``, not its state change)."""
    import json as _json

    from conformance.robustness.isolation import ChildLost, Worker

    seen = []
    worker = Worker.__new__(Worker)
    worker._read_line = lambda deadline: _json.dumps(reply)
    worker.tampered = lambda alive=True: seen.append(alive)  # returns None: nothing found
    worker.proc = type("P", (), {"wait": lambda self, timeout=None: 3})()
    worker.tail = lambda offset: ""
    try:
        answer = worker._reply(0.0, 1.0, 0)
    except ChildLost as lost:
        answer = lost.answer
    assert seen == [False] and answer["status"] == reply["status"]
