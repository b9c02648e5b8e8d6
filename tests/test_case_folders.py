"""The corpus has one folder per subject (``cases/README.md``): the offsets planner's cases in
``cases/offsets-planner/`` (the default corpus, :mod:`conformance.paths`), the entries planner's in
``cases/entries-planner/``; a rerun names ``--cases`` only for a folder outside the default."""

from __future__ import annotations

import re
from conformance.corpus.loader import case_files, load_corpus
from conformance.engine.rerun import cases_dir_arg
from conformance.paths import CASES_ROOT
from conformance.corpus.corpus_subject import CASE_SCHEMA_PATH, CASES_DIR as DEFAULT_CASES_DIR, DIVERGENCES_SCHEMA_PATH, FOUND_CASES_DIR
from conformance.plugin.results_path import not_a_results_path

SUBJECTS = ["canary-plan", "entries-planner", "offsets-planner"]


def test_one_folder_per_subject_each_with_its_readme():
    from conformance.corpus.subjects import discover

    folders = sorted(p.name for p in CASES_ROOT.iterdir() if p.is_dir())
    assert folders == SUBJECTS == sorted(discover())  # one folder per subject found in impls/
    assert all((CASES_ROOT / name / "README.md").is_file() for name in SUBJECTS)
    index = (CASES_ROOT / "README.md").read_text()
    links = set(re.findall(r"\]\(([a-z-]+)/README\.md\)", index))
    assert links == set(SUBJECTS)
    assert not list(CASES_ROOT.glob("*.json")), "case files sit in a subject's folder"


def test_the_offsets_corpus_and_its_schemas_sit_in_its_folder():
    assert DEFAULT_CASES_DIR == CASES_ROOT / "offsets-planner"
    assert CASE_SCHEMA_PATH == DEFAULT_CASES_DIR / "schema.json" and CASE_SCHEMA_PATH.is_file()
    assert DIVERGENCES_SCHEMA_PATH == DEFAULT_CASES_DIR / "divergences" / "schema.json"
    assert DIVERGENCES_SCHEMA_PATH.is_file()
    folders = {p.relative_to(DEFAULT_CASES_DIR).parts[0] for p in case_files(DEFAULT_CASES_DIR)}
    assert folders - {FOUND_CASES_DIR.name} == {"boundary", "errors", "random", "semantics", "spec"}


def test_the_entries_folder_holds_no_offsets_case_file():
    folder = CASES_ROOT / "entries-planner"
    assert sorted(p.name for p in folder.glob("*.jsonl")) == ["errors.jsonl", "semantics.jsonl"]
    assert case_files(folder) == []
    assert load_corpus([folder]) == ([], [])


def test_a_rerun_names_cases_only_outside_the_offsets_folder(tmp_path):
    assert cases_dir_arg(DEFAULT_CASES_DIR) is None
    assert cases_dir_arg(DEFAULT_CASES_DIR / "spec") is None
    assert cases_dir_arg(FOUND_CASES_DIR) is None  # fuzz-found cases run with the corpus
    assert cases_dir_arg(CASES_ROOT) == CASES_ROOT
    assert cases_dir_arg(CASES_ROOT / "entries-planner") == CASES_ROOT / "entries-planner"
    assert cases_dir_arg(tmp_path) == tmp_path


def test_a_run_never_writes_its_results_into_any_subjects_folder(tmp_path):
    for name in SUBJECTS:
        fault = not_a_results_path(CASES_ROOT / name / "results.json", [])
        assert fault == "is inside the case folder cases: a run never writes there"
    assert not_a_results_path(tmp_path / "results.json", []) is None
    own = tmp_path / "own"
    assert not_a_results_path(own / "r.json", [own]).startswith("is inside the case folder ")
