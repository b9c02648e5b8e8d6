"""Attacks on the move that left ``conformance/`` naming no subject: the corpus engine reaches its
subject through ``conformance/corpus/corpus_subject.py`` (discovery of ``impls/*/subject.py``,
``$CONFORMANCE_CORPUS_SUBJECT``), the probe sandbox takes the probe module as its first argument,
``upstream-entries`` chooses its subject by ``--subject``.

As a kernel under test that wants a green run: an external planner
(``tests/planted/subject_move_attacks.py``) that, at import, re-points the subject's environment
variable and ``PYTHONPATH``, replaces the reference planner by role and by name, empties the
contract's output names and tries to plant a second corpus subject under ``impls/``; planner names
that start with ``-`` given to the probe sandbox. As a reviewer: case files and ``--cases`` folders
of another subject, a second corpus subject (``--subject-module`` or a second one found in
``impls/``), an unknown ``$CONFORMANCE_CORPUS_SUBJECT``, the commands' ``--subject``.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from conformance.corpus import corpus_subject
from conformance.corpus.case_model import make_case
from conformance.engine.reference import record_expectations
from conformance.engine.rerun import RERUN_ENVIRONMENT, RUN_ENVIRONMENT, rerun_command
from tests.subproc import CHILD_ADDOPTS, REPO, cli, run_pytest

MODULE = "tests.planted.subject_move_attacks"
PLANNER = f"{MODULE}:launch"
CASE = "spec7-no-prefix"
ENV = corpus_subject.ENV
TOY = "tests.planted.toy_corpus.subject"
PLANT = "zz_hostile_subject"  # tests/planted/subject_move_attacks.py's PLANT (never imported here)
PLANTED = REPO / "impls" / PLANT
TWO_SUBJECTS = textwrap.dedent("""
    import runpy, sys
    import conformance.corpus.subjects as subjects
    real = subjects.discover
    def discover(*args, **kwargs):  # a checkout whose impls/ holds a second corpus subject
        found = dict(real(*args, **kwargs))
        import tests.planted.toy_corpus.subject as toy
        found[toy.NAME] = subjects.check(toy)
        return dict(sorted(found.items()))
    subjects.discover = discover
    module = sys.argv.pop(1)
    sys.argv[0] = module
    runpy.run_module(module, run_name="__main__", alter_sys=True)
""")


def _env(**extra: str) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in (ENV, "PYTEST_XDIST_WORKER")}
    env["PYTEST_ADDOPTS"] = CHILD_ADDOPTS
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO), os.environ.get("PYTHONPATH")) if p)
    return {**env, **extra}


def _python(*args: str, env: dict | None = None, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, *args], cwd=REPO, env=env or _env(),
                          capture_output=True, text=True, timeout=timeout)


@pytest.fixture
def no_plant():
    """The checkout's ``impls/`` as it was: whatever a planner planted there is removed. Asking
    for it takes the root conftest's checkout lock alone (``pytest_runtest_protocol``)."""
    assert not PLANTED.exists(), f"{PLANTED} is left from an earlier run"
    try:
        yield PLANTED
    finally:
        shutil.rmtree(PLANTED, ignore_errors=True)


def _no_results(path: Path) -> bool:
    """Whether the results file says no case ran (the run stopped before collecting)."""
    doc = json.loads(path.read_text()) if path.exists() else {"complete": False, "results": []}
    return doc["complete"] is False and doc["results"] == []


def _marks(path: Path) -> list[str]:
    return [line.split(" ", 1)[1] for line in path.read_text().splitlines()] if path.exists() else []


# --- a kernel under test that re-points the subject from its worker ---------------------------


def test_a_planner_that_repoints_the_subject_and_patches_the_reference_still_fails(tmp_path, no_plant):
    marks = tmp_path / "marks"
    proc, items = run_pytest(tmp_path, "--planner", PLANNER, "--case", CASE, "--isolate-timeout", "30",
                             env={"CONFORMANCE_SUBJECT_MARKS": str(marks), ENV: corpus_subject.NAME,
                                  "CONFORMANCE_SUBJECT_PLANT": "1"})
    assert proc.returncode == 1, proc.stdout[-3000:] + proc.stderr[-2000:]
    item = items[f"{CASE}[{PLANNER}]"]
    assert item.outcome == "failed"
    results = json.loads((tmp_path / "results.json").read_text())
    assert [(r["planner"], r["status"]) for r in results["results"]] == [(PLANNER, "fail")]
    lines = _marks(marks)
    if "planted a subject" in lines:  # no namespaces here: the next test says what follows
        pytest.skip("the probe ran unsandboxed (no user namespaces): its plant landed")
    assert "out_verify_num_valid: 1 element(s) differ, first at index 0" in item.text
    # the worker's patches landed there (its process), the judge's process never saw them
    assert "patched the reference in offsets-planner" in lines, lines
    # the rerun names the subject the run chose, not the planner's "hostile"
    assert f"{ENV}={corpus_subject.NAME} " in item.text
    assert f"{ENV}=hostile" not in item.text and "/nonexistent-hostile" not in item.text
    assert "plant refused: OSError" in lines and not PLANTED.exists()  # a read-only checkout


def test_a_subject_planted_without_the_sandbox_fails_the_case_not_passes_it(tmp_path, no_plant):
    marks = tmp_path / "marks"
    proc, items = run_pytest(tmp_path, "--planner", PLANNER, "--case", CASE, "--isolate-timeout", "30",
                             "--sandbox", "none", env={"CONFORMANCE_SUBJECT_MARKS": str(marks),
                                                       "CONFORMANCE_SUBJECT_PLANT": "1"})
    assert proc.returncode == 1, proc.stdout[-3000:] + proc.stderr[-2000:]
    assert "planted a subject" in _marks(marks)  # the probe's import, unsandboxed, wrote impls/
    item = items[f"{CASE}[{PLANNER}]"]
    assert item.outcome == "failed"
    # the worker that starts after the plant discovers it and refuses to run: a failure, by name
    assert f"impls.{PLANT}.subject is not a subject module" in item.text
    results = json.loads((tmp_path / "results.json").read_text())
    assert [r["status"] for r in results["results"]] == ["fail"]
    # and the next command says so plainly (no traceback)
    later = _python("-m", "conformance", "cases")
    assert later.returncode == 2 and "Traceback" not in later.stderr
    assert f"error: impls.{PLANT}.subject is not a subject module" in later.stderr


def test_the_fuzzer_s_golden_comes_from_the_real_reference(tmp_path, no_plant):
    out = tmp_path / "found"
    proc = _python("-m", "conformance", "fuzz", "--planner", PLANNER, "--n", "2", "--out", str(out),
                   "--no-progress", "--max-found", "1",
                   env=_env(CONFORMANCE_SUBJECT_MARKS=str(tmp_path / "marks")))
    assert proc.returncode == 1, proc.stdout[-3000:] + proc.stderr[-2000:]
    assert f"divergences: {PLANNER} (external) 2" in proc.stdout
    (found,) = out.glob("*.json")
    raw = json.loads(found.read_text())
    case = make_case(raw, found, "$")
    # the golden written is this process's reference's (never the planner's +1)
    assert raw["expect"] == record_expectations(case)[0]


# --- the probe sandbox's new first argument ---------------------------------------------------


@pytest.mark.parametrize("name", ["-c:print(1)", f"-m{PLANNER}", "--help:x", "-I:x"])
def test_a_planner_name_that_looks_like_an_option_is_only_a_planner_name(tmp_path, name):
    marks = tmp_path / "marks"
    proc = _python("-m", "conformance.robustness.probe_sandbox", corpus_subject.PROBE_MODULE, name,
                   env=_env(CONFORMANCE_SUBJECT_MARKS=str(marks)), timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    answer = json.loads(proc.stdout.split(corpus_subject.registry.PROBE_MARK)[-1])
    module = name.partition(":")[0]
    assert answer == {"available": False, "mode": None, "source": None,
                      "reason": f"cannot import {module!r} for planner {name!r}: "
                                f"ModuleNotFoundError: No module named {module.split('.')[0]!r}"}
    assert not marks.exists()  # the planted module never ran


@pytest.mark.parametrize("args", [[], ["impls.offsets_planner.probe"],
                                  ["impls.offsets_planner.probe", PLANNER, "extra"]])
def test_the_probe_sandbox_takes_exactly_a_module_and_a_name(tmp_path, args):
    marks = tmp_path / "marks"
    proc = _python("-m", "conformance.robustness.probe_sandbox", *args,
                   env=_env(CONFORMANCE_SUBJECT_MARKS=str(marks)), timeout=120)
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr == "usage: python -m conformance.robustness.probe_sandbox PROBE_MODULE NAME\n"
    assert not marks.exists()


def test_the_sandboxed_probe_command_ends_with_the_subject_s_probe_module():
    from conformance.robustness.probe_sandbox import use_for_probes

    before = list(corpus_subject.registry.PROBE_COMMAND)
    try:
        assert use_for_probes("namespace", cuda=False) is True
        command = list(corpus_subject.registry.PROBE_COMMAND)
    finally:
        corpus_subject.registry.PROBE_COMMAND[:] = before
    assert command == [sys.executable, "-P", "-m", "conformance.robustness.probe_sandbox",
                       "impls.offsets_planner.probe"]


# --- which subject: the environment variable, two corpus subjects, --subject-module -----------


def test_an_unknown_corpus_subject_variable_is_a_clear_error_of_the_commands():
    proc = _python("-m", "conformance", "cases", env=_env(**{ENV: "bogus"}))
    assert proc.returncode == 2, proc.stderr[-2000:]
    assert proc.stderr.strip() == (f"error: ${ENV}='bogus' is not a corpus subject; known: "
                                   f"{corpus_subject.NAME}")


def test_an_unknown_corpus_subject_variable_is_a_usage_error_of_pytest(tmp_path):
    proc, items = run_pytest(tmp_path, "--case", CASE, "--planner", "python", env={ENV: "bogus"})
    assert proc.returncode == 4, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert f"ERROR: conformance: ${ENV}='bogus' is not a corpus subject" in proc.stderr
    assert "Traceback" not in proc.stderr and items == {}


def test_two_corpus_subjects_without_the_variable_are_refused_by_the_commands():
    proc = _python("-c", TWO_SUBJECTS, "conformance", "cases")
    assert proc.returncode == 2, proc.stderr[-2000:]
    assert proc.stderr.strip() == ("error: the corpus engine runs one subject; found "
                                   f"['offsets-planner', 'toy-corpus']: name one with ${ENV}")
    chosen = _python("-c", TWO_SUBJECTS, "conformance", "cases", env=_env(**{ENV: "offsets-planner"}))
    assert chosen.returncode == 0, chosen.stderr[-2000:]
    assert CASE in chosen.stdout


def test_two_corpus_subjects_without_the_variable_are_a_usage_error_of_pytest(tmp_path):
    args = ["-c", TWO_SUBJECTS, "pytest", "conformance/", "-p", "no:cacheprovider", "--results",
            str(tmp_path / "r.json"), "--case", CASE, "--planner", "python"]
    proc = _python(*args)
    assert proc.returncode == 4, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert ("ERROR: conformance: the corpus engine runs one subject; found ['offsets-planner', "
            f"'toy-corpus']: name one with ${ENV}") in proc.stderr
    assert "Traceback" not in proc.stderr
    # the other corpus subject named while this process runs offsets-planner: refused, not ignored
    named = _python(*args, "--subject", "toy-corpus", env=_env(**{ENV: "offsets-planner"}))
    assert named.returncode == 4, named.stdout[-2000:] + named.stderr[-2000:]
    assert "subject toy-corpus (tests.planted.toy_corpus.subject) is a corpus subject" in named.stderr
    assert _no_results(tmp_path / "r.json")


@pytest.mark.parametrize("extra", [["--subject", "toy-corpus"], []], ids=["named", "all"])
def test_a_corpus_subject_module_is_refused_not_judged_on_the_offsets_planner_s_cases(tmp_path, extra):
    # before the fix `--subject toy-corpus` ran (and passed) offsets-planner's cases in its name
    proc, items = run_pytest(tmp_path, "--subject-module", TOY, *extra, "--case", CASE,
                             "--planner", "python")
    assert proc.returncode == 4, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert (f"ERROR: subject toy-corpus ({TOY}) is a corpus subject, and the corpus engine runs one "
            "corpus subject per process: this one runs offsets-planner") in proc.stderr
    assert items == {} and _no_results(tmp_path / "results.json")


def test_a_rerun_carries_the_corpus_subject_the_run_chose():
    assert ENV in RERUN_ENVIRONMENT
    command = rerun_command(CASE, "python", environment={ENV: "offsets-planner"})
    assert command.startswith(f"{ENV}=offsets-planner pytest conformance/ --planner python ")
    assert RUN_ENVIRONMENT.get(ENV) == os.environ.get(ENV)


# --- case files and folders of another subject ------------------------------------------------


def _case(subject: str | None) -> dict:
    doc = json.loads((REPO / "cases/offsets-planner/spec/section7-examples.json").read_text())
    case = next(c for c in doc["cases"] if c["id"] == CASE)
    defaults = doc["defaults"]
    raw = {**{k: defaults[k] for k in ("pins", "tags", "source", "golden_check")}, **case,
           "id": f"moved-{subject or 'none'}",
           "inputs": {**defaults["inputs"], **case["inputs"]}}
    if subject is not None:
        raw["subject"] = subject
    return raw


@pytest.mark.parametrize("subject", ["entries-planner", "canary-plan", "no-such-subject"])
def test_a_case_file_of_another_subject_is_a_bad_case_file(tmp_path, subject):
    folder = tmp_path / "cases"
    folder.mkdir()
    (folder / "moved.json").write_text(json.dumps(_case(subject)))
    proc, items = run_pytest(tmp_path, "--cases", str(folder), "--planner", "python")
    assert proc.returncode == 1, proc.stdout[-2000:] + proc.stderr[-2000:]
    (name,) = items
    assert name.endswith("moved.json@$.subject[load]") and items[name].outcome == "failed"
    assert f"'{subject}' is not one of ['offsets-planner']" in items[name].text


def test_a_case_file_that_names_the_corpus_subject_runs(tmp_path):
    folder = tmp_path / "cases"
    folder.mkdir()
    (folder / "moved.json").write_text(json.dumps(_case("offsets-planner")))
    (folder / "wrong.json").write_text(json.dumps({**_case(None), "id": "moved-wrong"}))
    proc, items = run_pytest(tmp_path, "--cases", str(folder), "--planner", "python",
                             "--planner", PLANNER, "--isolate-timeout", "30")
    assert proc.returncode == 1, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert {n: i.outcome for n, i in items.items()} == {
        "moved-offsets-planner[python]": "passed", "moved-wrong[python]": "passed",
        f"moved-offsets-planner[{PLANNER}]": "failed", f"moved-wrong[{PLANNER}]": "failed"}


def test_the_folder_of_a_one_call_subject_is_no_corpus_and_no_green_run(tmp_path):
    proc, items = run_pytest(tmp_path, "--cases", "cases/entries-planner", "--planner", "python")
    assert proc.returncode == 5, proc.stdout[-2000:]  # pytest's "no tests collected", never 0
    assert items == {} and "no tests ran" in proc.stdout


# --- the commands' --subject ------------------------------------------------------------------


def test_upstream_entries_refuses_the_corpus_subject_clearly(tmp_path):
    out = tmp_path / "out"
    proc = cli("upstream-entries", "0.5.23", "--subject", "offsets-planner", "--out", str(out),
               "--wheel", str(tmp_path / "none.whl"))
    assert proc.returncode == 2
    assert proc.stderr.strip().endswith("--subject offsets-planner: not a subject that defines "
                                        "UPSTREAM_ENTRY; known: entries-planner")
    assert "Traceback" not in proc.stderr and not out.exists()


@pytest.mark.parametrize("subject", ["no-such-subject", "toy-corpus"])
def test_cases_refuses_an_unknown_subject(subject):
    proc = cli("cases", "--subject", subject)
    assert proc.returncode == 2
    assert proc.stderr.strip() == (f"error: --subject {subject}: not one of canary-plan, "
                                   "entries-planner, offsets-planner")


def test_cases_of_the_corpus_subject_and_of_a_one_call_subject():
    corpus = cli("cases", "--subject", "offsets-planner")
    assert corpus.returncode == 0 and CASE in corpus.stdout
    assert "cases/entries-planner/" not in corpus.stdout
    one_call = cli("cases", "--subject", "entries-planner")
    assert one_call.returncode == 0 and "cases/entries-planner/errors.jsonl:1" in one_call.stdout
    assert CASE not in one_call.stdout
