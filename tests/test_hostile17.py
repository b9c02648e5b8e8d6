"""Seventeenth hostile review, kept as tests: planners right in every byte that leave their
caller's process changed where tests/test_hostile16.py's checks did not read, and a one-call
planner that changes the judge's own containers in place (planted:
tests/planted/hostile17_state.py, tests/planted/hostile17_one_call.py). Each planner is also shown
harming its caller outside the harness.

Fooled before this review, fixed here:

* process state (conformance/robustness/process_settings.py, read beside process_state.py): the
  recursion limit, the thread switch interval, the int ``str`` limit, the stack size of new
  threads, ``sys.excepthook`` / ``threading.excepthook``, ``sys.stdout``, ``logging.disable``, the
  default socket timeout, the calling thread's signal mask (``SIGTERM`` blocked), the interval
  timers (``signal.alarm(3600)``), the bindings of ``random`` and ``numpy.random`` (``random.seed``
  a no-op leaves ``random.getstate()`` as it was), the warnings filters and a module of
  ``sys.modules`` replaced: each planner of ``HARMS`` got exit 0, every case ``pass``. A key of
  ``builtins`` that is not a ``str`` crashed the worker's own check (``TypeError`` in
  ``builtins_rebound``: every case ``crash``, not the planner's doing); it is now named;
* the one-call engine's namespace guard compared bindings by identity only: a call that narrowed
  ``verdict.PROFILES["all"]`` in place made a built-in planner wrong where a project rule decides
  read ``differs`` (green), and every later built-in of the process with it; a subject's
  ``DEFAULT_TABLE`` or the poison seed (``inputs._SEED``) changed in place changed every later
  case's inputs or fills. Now every dict, list, set and bytearray the watched namespaces hold is
  snapshotted by contents (conformance/engine/namespaces.py), set back and recorded.

Not fixed here, strict xfails until tests/test_hostile18.py fixed them: a thread of the planner
that changes process state after the worker's last case ended, and a planner that forges the
worker's state report (both now seen where the kernel shows the state in ``/proc``: the umask, the
main thread's blocked and ignored signals, the resource limits), and a folder put first on
``sys.path`` (one put ahead of an old entry is now a change, one appended is not).
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest
import torch

from tests.planner_folder_runs import ROOT, corpus_run, planted_run, results_of
from tests.planted import hostile17_state as planted

STATE = "tests.planted.hostile17_state"
CASE = "spec7-prefill-and-decodes"

EFFECTS = {
    "lowers_recursion_limit": """
        def depth(n):
            return 0 if n == 0 else 1 + depth(n - 1)
        try:
            print("depth", depth(300))
        except RecursionError:
            print("RecursionError")""",
    "starves_other_threads": "print('switch interval', sys.getswitchinterval())",
    "shortens_int_text": """
        try:
            print(len(str(10 ** 1000)), "digits")
        except ValueError:
            print("ValueError")""",
    "shrinks_thread_stacks": "import threading; print('stack', threading.stack_size())",
    "swallows_uncaught_errors": """
        import contextlib, io
        err = io.StringIO()
        with contextlib.redirect_stderr(err):
            try:
                raise RuntimeError("server crashed")
            except RuntimeError:
                sys.excepthook(*sys.exc_info())
        print("traceback" if "server crashed" in err.getvalue() else "nothing printed")""",
    "swallows_thread_errors": """
        import contextlib, io, threading
        err = io.StringIO()
        with contextlib.redirect_stderr(err):
            t = threading.Thread(target=lambda: 1 / 0)
            t.start()
            t.join()
        print("traceback" if "ZeroDivisionError" in err.getvalue() else "nothing printed")""",
    "silences_stdout": """
        print("server output")
        sys.__stdout__.write("end\\n")""",
    "disables_logging": """
        import io, logging
        buf = io.StringIO()
        logging.basicConfig(stream=buf, force=True)
        logging.error("disk full")
        print("logged" if "disk full" in buf.getvalue() else "not logged")""",
    "times_out_sockets": "import socket; print('socket timeout', socket.socket().gettimeout())",
    "blocks_sigterm": """
        import subprocess
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(10)"])
        child.terminate()
        try:
            child.wait(timeout=2)
            print("stopped")
        except subprocess.TimeoutExpired:
            child.kill()
            print("its child ignored terminate()")""",
    "arms_an_alarm": """
        import signal
        print("SIGALRM due", signal.getitimer(signal.ITIMER_REAL)[0] > 3500)""",
    "rebinds_random_seed": """
        import random
        random.seed(7); first = random.random(); random.seed(7)
        print("first draw" if random.random() == first else "another draw")""",
    "rebinds_numpy_seed": """
        import numpy
        numpy.random.seed(7); first = numpy.random.random_sample(); numpy.random.seed(7)
        print("first draw" if numpy.random.random_sample() == first else "another draw")""",
    "turns_warnings_into_errors": """
        import warnings
        try:
            warnings.warn("old API", DeprecationWarning)
            print("warned")
        except DeprecationWarning:
            print("DeprecationWarning raised")""",
    "replaces_json": "import json; print('json.dumps' if hasattr(json, 'dumps') else 'no dumps')",
    "adds_a_builtins_int_key": """
        import builtins
        try:
            print(len(dir(builtins)), "names")
        except TypeError:
            print("TypeError")""",
}
AFTER = {"lowers_recursion_limit": "RecursionError",
         "starves_other_threads": "switch interval 50.0",
         "shortens_int_text": "ValueError", "shrinks_thread_stacks": "stack 65536",
         "swallows_uncaught_errors": "nothing printed", "swallows_thread_errors": "nothing printed",
         "silences_stdout": "end", "disables_logging": "not logged",
         "times_out_sockets": "socket timeout 0.001",
         "blocks_sigterm": "its child ignored terminate()",
         "arms_an_alarm": "SIGALRM due True", "rebinds_random_seed": "another draw",
         "rebinds_numpy_seed": "another draw",
         "turns_warnings_into_errors": "DeprecationWarning raised", "replaces_json": "no dumps",
         "adds_a_builtins_int_key": "TypeError"}
"""The last line the caller's own code prints after one right call (without the planner: depth
300, 50.0 -> 0.005, 1001 digits, stack 0, a traceback, ``server output`` printed, logged,
``None``, stopped, ``False``, the first draw twice, warned, ``json.dumps``, a count)."""
CALL = textwrap.dedent("""
    import sys
    sys.path.insert(0, {root!r})
    from tests import test_hostile14 as t
    from tests.planted import hostile17_state as planted
    kwargs = t._kwargs()
    getattr(planted, {planner!r})(**kwargs)
    assert kwargs["out_write_offsets"].tolist() == [0, 8, 9, 10]  # spec section 7: right
""")
STATE_LINES = {
    "lowers_recursion_limit": "recursion limit: ",
    "starves_other_threads": "thread switch interval: 0.005 -> 50.0",
    "shortens_int_text": "int max str digits: 4300 -> 640",
    "shrinks_thread_stacks": "thread stack size: 0 -> 65536",
    "swallows_uncaught_errors": "error hooks: replaced: sys.excepthook",
    "swallows_thread_errors": "error hooks: replaced: threading.excepthook",
    "silences_stdout": "standard streams: replaced: sys.stdout",
    "disables_logging": "logging disabled level: 0 -> 50",
    "times_out_sockets": "socket default timeout: None -> 0.001",
    "blocks_sigterm": "signal mask (this thread): () -> ('SIGTERM',)",
    "arms_an_alarm": "interval timers: changed: ITIMER_REAL armed",
    "rebinds_random_seed": "random and numpy.random bindings: rebound random.seed",
    "rebinds_numpy_seed": "random and numpy.random bindings: rebound numpy.random.seed",
    "turns_warnings_into_errors": "warnings filters: changed: ",
    "replaces_json": "sys.modules: replaced or removed json",
    "adds_a_builtins_int_key": "builtins bindings: rebound <a int key at 0x",
}


def _outside(code: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120, cwd=ROOT)


@pytest.mark.parametrize("planner", sorted(planted.HARMS))
def test_each_state_planner_harms_its_caller(planner):
    """Outside the harness, in a process of its own: one right call, then the caller's own code
    behaves otherwise (:data:`AFTER`)."""
    proc = _outside(CALL.format(root=str(ROOT), planner=planner)
                    + textwrap.dedent(EFFECTS[planner]))
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.splitlines()[-1] == AFTER[planner], proc.stdout
    assert "server output" not in proc.stdout


@pytest.mark.parametrize("planner", sorted(planted.HARMS))
def test_the_snapshot_names_each_change_and_sets_it_back(planner):
    """conformance/robustness/torch_state.py, in this process (the in-process runs' path): one
    change, named, and set back."""
    import builtins
    import signal

    from conformance.robustness import torch_state
    from tests.test_hostile14 import _kwargs

    before = torch_state.snapshot()
    try:
        getattr(planted, planner)(**_kwargs())
        changes = torch_state.changes(before, torch_state.snapshot())
        assert len(changes) == 1 and changes[0].startswith(STATE_LINES[planner]), changes
        assert torch_state.restore(before) == []
        assert torch_state.changes(before, torch_state.snapshot()) == []
    finally:
        torch_state.restore(before)
        signal.alarm(0)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM})
        vars(builtins).pop(1, None)
    assert 1 not in vars(builtins) and signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)
    assert "json" not in sys.modules or hasattr(sys.modules["json"], "dumps")


@pytest.mark.slow
def test_a_planner_that_leaves_its_process_changed_fails(tmp_path):
    """Fixed (each was exit 0, its case ``pass``; the builtins key a ``crash`` of the worker's
    own check): every planner of ``HARMS`` in one run, each ``fail`` naming its setting."""
    results = tmp_path / "results.json"
    args = [a for name in sorted(planted.HARMS) for a in ("--planner", f"{STATE}:{name}")]
    proc = corpus_run(None, results, *args, "--case", CASE)
    out = proc.stdout + proc.stderr
    statuses = {r["id"]: (r["status"], r.get("message") or "") for r in results_of(results)}
    assert proc.returncode == 1, out[-3000:]
    for name in planted.HARMS:
        status, message = statuses[f"{CASE}[{STATE}:{name}]"]
        assert status == "fail" and "changed process-global torch state" in message, message
        assert f"    {STATE_LINES[name]}" in message, message


def test_the_late_umask_planner_harms_its_caller():
    """Outside the harness: one right call, then, 0.3 s later, the caller's files are created
    world-writable."""
    code = CALL.format(root=str(ROOT), planner="changes_umask_after_its_last_call") + \
        textwrap.dedent("""
        import os, stat, tempfile, time
        os.umask(0o022)
        time.sleep(1)
        path = os.path.join(tempfile.mkdtemp(), "server.log")
        open(path, "w").close()
        print("mode", oct(stat.S_IMODE(os.stat(path).st_mode)))""")
    proc = _outside(code)
    assert proc.returncode == 0 and proc.stdout.splitlines()[-1] == "mode 0o666", proc


@pytest.mark.slow
def test_a_thread_that_changes_state_after_the_last_case_fails(tmp_path):
    """Fixed in tests/test_hostile18.py (was a strict xfail): the harness reads the worker's
    umask in /proc once more after the linger (conformance/robustness/outside_view.py)."""
    code, out, statuses = planted_run(tmp_path, f"{STATE}:changes_umask_after_its_last_call",
                                      CASE)
    assert code == 1 and statuses == {CASE: "fail"}, (code, statuses, out[-3000:])
    assert "umask: " in out and " -> 0000" in out, out[-3000:]


def test_the_forging_planner_harms_its_caller():
    """Outside the harness: the umask is 0 after one right call."""
    code = CALL.format(root=str(ROOT), planner="forges_its_state_report") + \
        "import os; print('umask', oct(os.umask(0o022)))"
    proc = _outside(code)
    assert proc.returncode == 0 and proc.stdout.splitlines()[-1] == "umask 0o0", proc


@pytest.mark.slow
def test_a_planner_that_forges_its_state_report_fails(tmp_path):
    """Fixed in tests/test_hostile18.py (was a strict xfail): the umask is read in /proc by the
    harness, not reported by the worker (conformance/robustness/outside_view.py)."""
    code, out, statuses = planted_run(tmp_path, f"{STATE}:forges_its_state_report", CASE)
    assert code == 1 and statuses == {CASE: "fail"}, (code, statuses, out[-3000:])


def test_the_shadowing_planner_harms_its_caller():
    """Outside the harness: the caller's next ``import statistics`` runs the planner's file."""
    code = CALL.format(root=str(ROOT), planner="prepends_a_shadowing_folder") + \
        "import statistics; print('shadowed', getattr(statistics, 'SHADOWED', False))"
    proc = _outside(code)
    assert proc.returncode == 0 and proc.stdout.splitlines()[-1] == "shadowed True", proc


@pytest.mark.slow
def test_a_planner_that_puts_a_folder_first_on_sys_path_fails(tmp_path):
    """Fixed in tests/test_hostile18.py (was a strict xfail): a folder put ahead of one that was
    there is a change (conformance/robustness/import_state.py); one appended is not."""
    code, out, statuses = planted_run(tmp_path, f"{STATE}:prepends_a_shadowing_folder", CASE)
    assert code == 1 and statuses == {CASE: "fail"}, (code, statuses, out[-3000:])


# --- the one-call engine's containers -------------------------------------------------------

def _entries():
    from conformance.corpus.subjects import discover
    from conformance.paths import CASES_ROOT

    subject = discover()["entries-planner"]
    return subject, {c["id"]: c for c in subject.load_cases(CASES_ROOT / subject.NAME)}


def _judge(case_id: str, launch):
    from conformance.engine.one_call import judge_call

    subject, cases = _entries()
    return judge_call(subject, cases[case_id], launch, torch.device("cpu"))


def _recorded(verdict, where: str) -> list[tuple[str, str]]:
    return [(d.run, d.rule) for d in verdict.differences
            if d.what == "input" and d.field == f"{where} (its contents)"]


@pytest.mark.usefixtures("fixed_poison_seed")
def test_profiles_narrowed_in_place_are_set_back_and_fail_the_planner():
    """Fixed (was ``differs``, a pass, and every later built-in judged on the contract only)."""
    from conformance.engine.call_runs import RUNS
    from conformance.engine.verdict import PROFILES, status_of
    from tests.planted.hostile17_one_call import narrows_the_profiles

    everything = PROFILES["all"]
    try:
        verdict = _judge("entries-lut-clamp", narrows_the_profiles)
        assert PROFILES["all"] is everything == ("contract", "project", "wrapper")
    finally:
        PROFILES["all"] = everything
    assert _recorded(verdict, "conformance.engine.verdict.PROFILES") == [
        (run, "contract") for run in RUNS]
    assert status_of(verdict, PROFILES["all"]) == ("fail", ("contract", "lut-clamp"))


def test_the_profile_narrowing_planner_is_wrong_and_turns_a_failure_into_differs():
    """Outside the judge: its plan differs from the golden where ``lut-clamp`` decides, and after
    one call a difference that rule decides reads ``differs`` on every rule."""
    from conformance.engine import verdict as v
    from tests.planted.hostile17_one_call import narrows_the_profiles

    subject, cases = _entries()
    kwargs = subject.build(cases["entries-lut-clamp"], torch.device("cpu"))
    everything = v.PROFILES["all"]
    data = v.VerdictData()
    data.add(v.Difference(0, "a", "value", "out_verify_slot_indices", 4, 119, -1, "lut-clamp"))
    try:
        narrows_the_profiles(**kwargs)
        assert kwargs["out_verify_slot_indices"].tolist() == [116, 117, 118, 119, -1, -1]
        assert v.status_of(data, v.PROFILES["all"])[0] == "differs"
    finally:
        v.PROFILES["all"] = everything
    assert v.status_of(data, v.PROFILES["all"])[0] == "fail"


@pytest.mark.usefixtures("fixed_poison_seed")
def test_a_default_table_changed_in_place_is_set_back():
    """Fixed: before, the table stayed 32 columns wide and the next case built on the default
    table failed on the honest planner (shown here by calling the planner outside the judge)."""
    from conformance.engine.call_runs import RUNS
    from impls.entries_planner import subject as entries
    from tests.planted.hostile17_one_call import widens_the_default_table

    subject, cases = _entries()
    verdict = _judge("entries-padding-row-between-two", widens_the_default_table)
    assert entries.DEFAULT_TABLE == {"rows": 4, "cols": 16}
    assert _recorded(verdict, "impls.entries_planner.subject.DEFAULT_TABLE") == [
        (run, "contract") for run in RUNS]
    assert _judge("entries-padding-row-between-two", subject.get_planner("python")).count == 0
    try:
        widens_the_default_table(**subject.build(cases["entries-padding-row-between-two"],
                                                 torch.device("cpu")))
        assert _judge("entries-padding-row-between-two", subject.get_planner("python")).count
    finally:
        entries.DEFAULT_TABLE["cols"] = 16


@pytest.mark.usefixtures("fixed_poison_seed")
def test_the_poison_seed_changed_in_place_is_set_back(fixed_poison_seed):
    """Fixed: before, every later fill of the process came from seed 0, the planner's choice."""
    from conformance.engine.call_runs import RUNS
    from conformance.engine.inputs import poison_seed
    from tests.planted.hostile17_one_call import reseeds_the_fills

    verdict = _judge("entries-padding-row-between-two", reseeds_the_fills)
    assert poison_seed() == fixed_poison_seed != 0
    assert _recorded(verdict, "conformance.engine.inputs._SEED") == [
        (run, "contract") for run in RUNS]
    assert verdict.count == len(RUNS)


def test_the_shadow_folder_is_this_reviews():
    assert os.path.basename(planted.SHADOW) == "hostile17-shadow"


def test_a_compiled_kernels_launcher_module_is_not_a_change_but_json_is():
    """Triton 3.6 loads each newly compiled kernel's launcher as ``sys.modules
    ["__triton_launcher"]``, replacing the last: the first compiled case of every Triton design
    failed on it on a GPU (reports/gpu/2026-12-06-f/). That name is not compared; any other
    module replaced still is."""
    import types

    from conformance.robustness import torch_state

    before = torch_state.snapshot()
    saved = {name: sys.modules.get(name) for name in ("__triton_launcher", "json")}
    try:
        sys.modules["__triton_launcher"] = types.ModuleType("__triton_launcher")
        assert torch_state.changes(before, torch_state.snapshot()) == []
        sys.modules["json"] = types.ModuleType("json")
        assert torch_state.changes(before, torch_state.snapshot()) == [
            "sys.modules: replaced or removed json"]
        assert torch_state.restore(before) == []
        assert sys.modules["json"] is saved["json"]
    finally:
        for name, module in saved.items():
            if module is None:
                sys.modules.pop(name, None)
            else:
                sys.modules[name] = module
