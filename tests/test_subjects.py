"""Subjects as folders: discovery (conformance/corpus/subjects.py), ``--subject`` and
``--subject-module`` (conformance/plugin/subjects.py), and a third subject built from scratch in a
temporary folder (a toy exclusive-prefix-sum kernel) that ``pytest conformance/`` judges with no
change to the harness."""

from __future__ import annotations

import importlib
import textwrap
import types

import pytest

from conformance.corpus.subjects import SubjectError, check, discover
from tests.subproc import run_pytest

TOY_SUBJECT = '''
"""A toy subject: out[i] = the exclusive prefix sum of lengths, for i in [0, n]; the tail past n
must keep its contents; a negative length raises ToyError("negative", ...)."""
import json
from pathlib import Path

import torch

NAME, ENGINE, SPEC = "toy-scan", "one-call", "toy.md"
CASES_DIR = Path(__file__).parent / "cases"
OUTPUTS = ("out",)


class ToyError(ValueError):
    def __init__(self, error_id, message):
        super().__init__(message)
        self.error_id = error_id


ERROR = ToyError


def good(*, lengths, out):
    if bool((lengths < 0).any()):
        raise ToyError("negative", "toy: lengths must be >= 0")
    out[0] = 0
    out[1 : lengths.numel() + 1] = torch.cumsum(lengths, 0)


def wrong(*, lengths, out):
    good(lengths=lengths, out=out)
    out[lengths.numel()] += 1  # the total one too high


PLANNERS = {"good": good, "wrong": wrong}


def get_planner(name):
    return PLANNERS[name]


def planner_mode(name):
    return "cpu"


def load_cases(folder):
    cases = []
    for path in sorted(Path(folder).glob("*.jsonl")):
        for number, line in enumerate(path.read_text().splitlines(), 1):
            cases.append({**json.loads(line), "_file": str(path), "_line": number})
    return cases


def build(case, device):
    lengths = torch.tensor(case["lengths"], dtype=torch.int64, device=device)
    return {"lengths": lengths, "out": torch.zeros(case["capacity"], dtype=torch.int64,
                                                   device=device)}


def expected_error(case):
    return tuple(case["error"]) if "error" in case else None


def error_rule(case):
    return "contract"


def golden(case):
    return {"out": case["expect"]}


def element_rules(case, kwargs):
    return {"out": ["contract"] * case["capacity"]}
'''
TOY_CASES = [
    '{"id": "toy-basic", "description": "three lengths", "lengths": [2, 0, 3], "capacity": 6,'
    ' "expect": [0, 2, 2, 5]}',
    '{"id": "toy-negative", "description": "a negative length", "lengths": [1, -1], '
    '"capacity": 3, "error": ["negative", "toy: lengths must be >= 0"]}',
]


def test_discovery_finds_every_subject_folder_of_impls():
    found = discover()
    assert {name: m.ENGINE for name, m in found.items()} == {
        "canary-plan": "one-call", "entries-planner": "one-call", "offsets-planner": "corpus"}
    assert [m.__name__ for m in found.values()] == [
        "impls.canary_plan.subject", "impls.entries_planner.subject",
        "impls.offsets_planner.subject"]


def test_a_module_without_what_its_engine_needs_is_refused():
    module = types.ModuleType("half")
    module.NAME, module.ENGINE, module.SPEC = "half", "one-call", "x.md"
    with pytest.raises(SubjectError, match=r"half is not a subject module: it lacks OUTPUTS, "
                                           r"ERROR, PLANNERS"):
        check(module)
    module.ENGINE = "batch"
    with pytest.raises(SubjectError, match="ENGINE 'batch' is not one of"):
        check(module)


def test_two_subjects_of_one_name_are_refused():
    with pytest.raises(SubjectError, match="two subjects named 'entries-planner'"):
        discover(extra=["impls.entries_planner.subject"])


@pytest.fixture()
def toy(tmp_path):
    package = tmp_path / "toy_kernels"
    (package / "cases").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "subject.py").write_text(textwrap.dedent(TOY_SUBJECT))
    (package / "cases" / "scan.jsonl").write_text("\n".join(TOY_CASES) + "\n")
    return tmp_path


def test_a_toy_subject_from_scratch_is_judged_by_pytest_conformance(toy):
    proc, items = run_pytest(toy, "--subject-module", "toy_kernels.subject", "--subject",
                             "toy-scan", env={"PYTHONPATH": str(toy)})
    assert proc.returncode == 1, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert {name: i.outcome for name, i in items.items()} == {
        "toy-basic[good]": "passed", "toy-basic[wrong]": "failed",
        "toy-negative[good]": "passed", "toy-negative[wrong]": "passed"}
    text = items["toy-basic[wrong]"].text
    assert "run a: out[3]: expected 5, got 6 (value; rule contract)" in text
    assert "subject toy-scan:" in proc.stdout
    rerun = next(line for line in text.splitlines() if line.strip().startswith("rerun: "))
    command = rerun.split("rerun: ", 1)[1]
    assert " --subject toy-scan --subject-module toy_kernels.subject " in command
    assert f"PYTHONPATH={toy}" in command or str(toy) in command
    import subprocess

    from tests.subproc import REPO, _env
    written = REPO / "reports" / "out" / "rerun-toy-basic.json"  # the rerun's own results file
    existed = written.exists()
    try:
        again = subprocess.run(command, shell=True, cwd=REPO, env=_env(), capture_output=True,
                               text=True, timeout=300)  # the printed line, pasted as it is
    finally:
        if not existed:
            written.unlink(missing_ok=True)
    assert again.returncode == 1, again.stdout[-2000:] + again.stderr[-2000:]
    assert "run a: out[3]: expected 5, got 6 (value; rule contract)" in again.stdout
    assert "1 failed" in again.stdout


def test_subject_selects_and_unknown_names_are_usage_errors(tmp_path):
    proc, items = run_pytest(tmp_path, "--subject", "entries-planner", "--co", "-q")
    names = [line for line in proc.stdout.splitlines() if "::" in line]
    assert proc.returncode == 0 and len(names) >= 72
    assert all("::entries-" in n for n in names)
    proc, _ = run_pytest(tmp_path, "--subject", "nosuch", "--co")
    assert proc.returncode == 4
    assert ("--subject nosuch: no such subject; known: canary-plan, entries-planner, "
            "offsets-planner") in proc.stderr


def test_an_external_planner_is_refused_for_a_one_call_subject(tmp_path):
    proc, _ = run_pytest(tmp_path, "--subject", "entries-planner", "--planner",
                         "tests.planted.wrong_entries_planners:shifted_position", "--co")
    assert proc.returncode == 4
    assert "is not judged on entries-planner" in proc.stderr


def test_the_offsets_subject_alone_collects_no_entries_case(tmp_path):
    proc, _ = run_pytest(tmp_path, "--subject", "offsets-planner", "--planner", "python",
                         "--co", "-q")
    names = [line for line in proc.stdout.splitlines() if "::" in line]
    assert proc.returncode == 0 and len(names) > 200
    assert not any("::entries-" in n for n in names)


def test_a_one_call_subjects_planner_is_judged_as_a_built_in():
    """A pipeline's name (``triton+python-entries``) is no built-in offsets planner's, yet it is a
    built-in of its subject: judged on every rule kind, never on a run's ``--profile``."""
    from types import SimpleNamespace

    from conformance.engine.verdict import PROFILES
    from conformance.plugin.profiles import ProfileJudge

    judge = SimpleNamespace(profile="contract")
    one_call, corpus = SimpleNamespace(engine="one-call"), SimpleNamespace()
    assert ProfileJudge.judged_pins(judge, "triton+python-entries", one_call) == PROFILES["all"]
    assert ProfileJudge.judged_pins(judge, "mod:attr", corpus) == PROFILES["contract"]
    assert ProfileJudge.judged_pins(judge, "triton", corpus) == PROFILES["all"]


def test_reports_name_a_one_call_planner_with_its_subject():
    from conformance.reporting import divergence_profile
    from conformance.reporting.report import planner_label

    assert planner_label({"planner": "triton", "subject": "entries-planner"}) == \
        "triton (entries-planner)"
    assert planner_label({"planner": "triton", "subject": None}) == "triton"
    results = [{"planner": "triton", "subject": None, "status": "pass", "out_of_contract": [],
                "verdict": None},
               {"planner": "triton (canary-plan)", "subject": "canary-plan", "status": "pass",
                "out_of_contract": [], "verdict": None}]
    assert divergence_profile.profile(results)["planners"] == ["triton"]


def test_a_bad_line_or_a_duplicate_id_fails_alone_and_the_rest_still_runs(toy):
    lines = [TOY_CASES[0], "{not json", TOY_CASES[0], TOY_CASES[1]]
    (toy / "toy_kernels" / "cases" / "scan.jsonl").write_text("\n".join(lines) + "\n")
    # the toy's own reader is strict; the entries subject's, which real subjects share, is not
    (toy / "toy_kernels" / "subject.py").write_text(
        textwrap.dedent(TOY_SUBJECT) + "\nfrom impls.entries_planner.subject import load_cases\n")
    proc, items = run_pytest(toy, "--subject-module", "toy_kernels.subject", "--subject",
                             "toy-scan", "--planner", "good", env={"PYTHONPATH": str(toy)})
    assert {name: i.outcome for name, i in items.items()} == {
        "toy-scan:scan.jsonl:2[load]": "failed", "toy-scan:scan.jsonl:3[load]": "failed",
        "toy-basic[good]": "passed", "toy-negative[good]": "passed"}, proc.stdout[-3000:]
    assert "scan.jsonl:2: not JSON: " in items["toy-scan:scan.jsonl:2[load]"].text
    assert "duplicate case id 'toy-basic' (first at scan.jsonl:1)" in \
        items["toy-scan:scan.jsonl:3[load]"].text


def test_a_corpus_subject_without_its_modules_is_refused_by_name(tmp_path, monkeypatch):
    pkg = tmp_path / "toycorpus"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "contract.py").write_text("")
    (pkg / "subject.py").write_text('NAME = "toy-corpus"\nENGINE = "corpus"\nSPEC = "x.md"\n')
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(SubjectError) as err:
        check(importlib.import_module("toycorpus.subject"))
    text = str(err.value)
    assert "module toycorpus.errors" in text and "module toycorpus.probe" in text
    assert "module toycorpus.contract" not in text


def test_a_subject_none_of_whose_planners_is_named_says_it_did_not_run(tmp_path):
    """``--planner triton+python-entries`` is a pipeline of the whole plan only: the entries
    planner's and the offsets planner's cases run on no planner, and the summary says so (a
    subject left out must not read as judged)."""
    proc, items = run_pytest(tmp_path, "-n", "0", "--planner", "triton+python-entries")
    assert proc.returncode == 0, proc.stdout[-2000:]
    out = proc.stdout
    assert ("subject entries-planner: not run: --planner names none of its planners "
            "(python, triton, numba-cuda)") in out
    assert "subject offsets-planner: not run: --planner names none of its planners (python, " in out
    assert "subject canary-plan: not run" not in out
    assert {name.split("[")[1].rstrip("]") for name in items if "[" in name} >= \
        {"triton+python-entries"}
