"""``--extra-cases DIR`` adds a folder of case files to the corpus; ``--cases DIR`` replaces it
(:mod:`conformance.plugin.extra_cases`), in ``pytest conformance/`` and ``python -m conformance``."""

from __future__ import annotations

import json
from pathlib import Path

from conformance.corpus.loader import load_corpus
from conformance.corpus.corpus_subject import CASES_DIR as DEFAULT_CASES_DIR
from conformance.plugin.extra_cases import with_extra_cases
from tests.case_docs import case_doc
from tests.subproc import cli, run_pytest

OWN = "own-decode"


def _own_cases(tmp_path: Path) -> Path:
    folder = tmp_path / "own"
    folder.mkdir()
    (folder / "own.json").write_text(json.dumps(case_doc(OWN)))
    return folder


def test_with_extra_cases_adds_to_the_default_or_to_the_given_folders():
    a, b, c = Path("a"), Path("b"), Path("c")
    assert with_extra_cases(None, None) is None
    assert with_extra_cases([], []) is None
    assert with_extra_cases([a], []) == [a]
    assert with_extra_cases([], [b]) == [DEFAULT_CASES_DIR, b]
    assert with_extra_cases([a], [b, c]) == [a, b, c]


def test_extra_cases_run_with_the_corpus_and_cases_replaces_it(tmp_path):
    own = _own_cases(tmp_path)
    proc, items = run_pytest(tmp_path, "--planner", "python", "--extra-cases", str(own),
                             "--case", OWN, "--case", "spec7-no-prefix")
    assert proc.returncode == 0, proc.stdout[-3000:]
    assert {name: item.outcome for name, item in items.items()} == {
        f"{OWN}[python]": "passed", "spec7-no-prefix[python]": "passed"}
    results = json.loads((tmp_path / "results.json").read_text())
    own_entry = next(r for r in results["results"] if r["case"] == OWN)
    assert f"--cases {own} --case {OWN}" in own_entry["rerun"]  # a rerun loads only its folder

    proc, items = run_pytest(tmp_path, "--planner", "python", "--cases", str(own),
                             "--case", OWN, "--case", "spec7-no-prefix")
    assert proc.returncode == 1
    assert items[f"{OWN}[python]"].outcome == "passed"
    assert items["spec7-no-prefix[missing]"].outcome == "failed"  # not in --cases' folder
    results = {r["id"]: r for r in json.loads((tmp_path / "results.json").read_text())["results"]}
    # its rerun lists the cases of the run's folders (a planner 'load' does not exist)
    assert results["spec7-no-prefix[missing]"]["rerun"].endswith(
        f"python -m conformance --cases {own} cases"), results["spec7-no-prefix[missing]"]


def test_a_case_id_that_names_no_case_beside_extra_cases_is_a_failure_not_a_crash(tmp_path):
    """A misspelt ``--case`` with ``--extra-cases`` given: the ``ID[missing]`` failure, whose
    rerun lists the cases with the run's own options (the results writer passed the extra
    folders where the environment goes: an INTERNALERROR, exit 3, before)."""
    own = _own_cases(tmp_path)
    proc, items = run_pytest(tmp_path, "--planner", "python", "--extra-cases", str(own),
                             "--case", "no-such-case")
    assert proc.returncode == 1, proc.stdout[-3000:]
    assert "INTERNALERROR" not in proc.stdout + proc.stderr
    assert {name: item.outcome for name, item in items.items()} == {
        "no-such-case[missing]": "failed"}
    results = {r["id"]: r for r in json.loads((tmp_path / "results.json").read_text())["results"]}
    assert results["no-such-case[missing]"]["rerun"].endswith(
        f"python -m conformance --extra-cases {own} cases"), results["no-such-case[missing]"]


def test_an_extra_case_id_already_in_the_corpus_is_a_load_fault(tmp_path):
    folder = tmp_path / "dup"
    folder.mkdir()
    (folder / "dup.json").write_text(json.dumps(case_doc("spec7-no-prefix")))
    cases, errors = load_corpus(with_extra_cases(None, [folder]))
    assert [c.id for c in cases].count("spec7-no-prefix") == 1
    assert [(e.case_id, "duplicate case id" in e.message) for e in errors] == [("spec7-no-prefix", True)]


def test_the_cli_lists_the_corpus_and_the_extra_cases(tmp_path):
    own = _own_cases(tmp_path)
    corpus = len(load_corpus()[0])
    proc = cli("--extra-cases", str(own), "cases")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.rstrip().endswith(f"{corpus + 1} cases, 0 faulty file entries")
    assert OWN in proc.stdout
    proc = cli("--cases", str(own), "cases")
    assert proc.stdout.rstrip().endswith("1 case, 0 faulty file entries")


def test_extra_cases_keep_every_subject_and_cases_keeps_only_the_corpus_engines(tmp_path):
    """``--extra-cases`` adds to the run; it does not narrow it to the corpus engine's subject as
    ``--cases`` does (conformance/plugin/subjects.py): the one-call subjects' cases still run."""
    import subprocess
    import sys

    from tests.subproc import REPO

    own = _own_cases(tmp_path)

    def collected(*args: str) -> set[str]:
        proc = subprocess.run([sys.executable, "-m", "pytest", "conformance/", "-p",
                               "no:cacheprovider", "--planner", "python", "--collect-only", "-q",
                               *args], cwd=REPO, capture_output=True, text=True, timeout=300)
        assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
        return {line.strip() for line in proc.stdout.splitlines() if "::" in line}

    every = collected()
    with_own = collected("--extra-cases", str(own))
    assert with_own - every == {f"conformance/test_corpus.py::{OWN}[python]"}
    assert every <= with_own  # nothing dropped: the other subjects' cases are still there
    only_corpus = collected("--cases", str(DEFAULT_CASES_DIR), "--extra-cases", str(own))
    assert only_corpus < with_own and not any("test_corpus.py" not in i for i in only_corpus)


def test_a_selected_case_whose_file_fails_to_load_counts_once(tmp_path):
    """``--case ID`` of a case whose file has a fault: one failing ``[load]`` item says why, and no
    ``ID[missing]`` item counts the same fault a second time."""
    folder = tmp_path / "bad"
    folder.mkdir()
    doc = case_doc("own-bad")
    doc["expect"]["out_write_offsets"] = [0]  # too short for its bs
    (folder / "bad.json").write_text(json.dumps(doc))
    proc, items = run_pytest(tmp_path, "--planner", "python", "--extra-cases", str(folder),
                             "--case", "own-bad")
    assert proc.returncode == 1
    assert len(items) == 1, list(items)
    (name, item), = items.items()
    assert name.endswith("[load]") and item.outcome == "failed", (name, item)


def test_a_broken_extra_case_file_is_said_in_words_and_rerun_with_extra_cases(tmp_path):
    """A case file of an ``--extra-cases`` folder that does not load: its fault says which field
    must be what and what it holds, its rerun keeps ``--extra-cases`` (``--cases`` would drop the
    corpus, and with it the earlier file of a duplicate id), and the summary prints its legend
    once, under the last subject's table."""
    folder = tmp_path / "mine"
    folder.mkdir()
    (folder / "a.json").write_text(json.dumps(case_doc("mine-a", inputs={
        **case_doc("x")["inputs"], "prefix_lens": "10,2"})))
    short = case_doc("mine-b")
    short["expect"]["out_write_offsets"] = [0]
    (folder / "b.json").write_text(json.dumps(short))
    proc, items = run_pytest(tmp_path, "--planner", "python", "--extra-cases", str(folder),
                             "--case", "mine-a", "--case", "mine-b", "--case", "spec7-no-prefix",
                             "--case", "canary-error-lut-required")
    assert proc.returncode == 1, proc.stdout[-3000:]
    out = proc.stdout
    assert (f'bad case file: {folder / "a.json"}: at $.inputs.prefix_lens: "prefix_lens" must be '
            'a JSON array of integers (or an object with "fill", "arange", "cycle", "random" or '
            '"concat"), got the string "10,2"\n') in out
    assert (f"bad case file: {folder / 'b.json'}: at $.expect.out_write_offsets: golden has 1 "
            "value, bs=1 needs 2\n") in out
    results = {r["case"]: r for r in json.loads((tmp_path / "results.json").read_text())["results"]}
    for case in ("mine-a", "mine-b"):
        assert results[case]["planner"] == "load"
        assert results[case]["rerun"].endswith(
            f"python -m conformance --extra-cases {folder} cases"), results[case]["rerun"]
    summary = out.split("conformance summary")[1].splitlines()
    heads = [i for i, line in enumerate(summary) if line.startswith("subject ")]
    assert [summary[i] for i in heads] == ["subject offsets-planner:", "subject canary-plan:"]
    legend = [i for i, line in enumerate(summary) if line.startswith("pass..error: ")]
    assert len(legend) == 1  # once, not under each table
    assert summary[legend[0] - 1].split()[:4] == ["python", "cpu", "1", "0"]  # canary-plan's row
    assert summary[legend[0] + 1].startswith("  decides; not-wrapper, ")


def test_a_fault_is_rerun_with_the_folder_options_the_run_gave(tmp_path):
    """:func:`conformance.plugin.case_folders.rerun_folders`: the run's own options up to the
    folder that holds the file; none for a file of the corpus in a run without ``--cases``."""
    import pytest

    from conformance.plugin.case_folders import FOLDER_OPTIONS, rerun_folders

    class Config:
        def __init__(self, given):
            self.stash = pytest.Stash()
            self.stash[FOLDER_OPTIONS] = given

    a, b, c = (tmp_path / name for name in "abc")
    run = Config([("--cases", a), ("--extra-cases", b), ("--extra-cases", c)])
    assert rerun_folders(run, a / "x.json") == ([a], [])
    assert rerun_folders(run, b / "sub" / "x.json") == ([a], [b])
    assert rerun_folders(run, c / "x.json") == ([a], [b, c])
    assert rerun_folders(run) == ([a], [b, c])
    extra_only = Config([("--extra-cases", b)])
    assert rerun_folders(extra_only, b / "x.json") == ([], [b])
    assert rerun_folders(extra_only, DEFAULT_CASES_DIR / "spec" / "x.json") == ([], [])
    assert rerun_folders(Config([]), DEFAULT_CASES_DIR / "spec" / "x.json") == ([], [])


def test_a_case_folder_option_after_the_subcommand_says_where_it_goes(tmp_path, capsys):
    """argparse alone would say "unrecognized arguments"; the folder options belong to
    ``python -m conformance`` itself, before the subcommand. A folder named like a subcommand
    (``--cases cases``) is a folder, not the command."""
    import pytest

    from conformance.cli import _case_folder_after_command, main

    with pytest.raises(SystemExit) as stopped:
        main(["record", "spec7-no-prefix", "--extra-cases", str(tmp_path)])
    assert stopped.value.code == 2
    assert capsys.readouterr().err.strip().endswith(
        "error: --extra-cases goes before the subcommand: python -m conformance --extra-cases "
        "DIR COMMAND ...")
    commands = {"cases", "record"}
    assert _case_folder_after_command(["--cases", "cases", "cases"], commands) is None
    assert _case_folder_after_command(["cases", "--cases=x"], commands) == "--cases"
    assert _case_folder_after_command(["--extra-cases", "d", "record", "a"], commands) is None


def test_a_subcommand_option_before_the_subcommand_says_where_it_goes(tmp_path, capsys):
    """The mirror of the folder options: ``--subject`` (a subcommand's option) before the
    subcommand, which argparse alone answers with ``invalid choice: 'canary-plan'`` (it takes the
    option's value for the command), names the option and the command it belongs after. The
    folder options, their abbreviations and ``--help`` are ``python -m conformance``'s own."""
    import pytest

    from conformance.cli import _command_option_before_command, main

    with pytest.raises(SystemExit) as stopped:
        main(["--subject", "canary-plan", "planners"])
    assert stopped.value.code == 2
    assert capsys.readouterr().err.strip().endswith(
        "error: --subject is an option of the subcommand, not of python -m conformance: "
        "python -m conformance planners --subject ... (only --cases and --extra-cases go before "
        "the subcommand)")
    commands = {"cases", "planners"}
    assert _command_option_before_command(["--subject=canary-plan", "cases"], commands) \
        == ("--subject", "cases")
    assert _command_option_before_command(
        ["--extra-cases", str(tmp_path), "--tag", "hazard", "cases"], commands) \
        == ("--tag", "cases")
    assert _command_option_before_command(["--extra", "d", "planners"], commands) is None
    assert _command_option_before_command(["--cases", "--x", "cases"], commands) is None
    assert _command_option_before_command(["cases", "--subject", "canary-plan"], commands) is None
    assert _command_option_before_command(["--subject", "canary-plan"], commands) is None
