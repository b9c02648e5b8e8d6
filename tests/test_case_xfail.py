"""Which of a case's own ``xfail`` declarations reach a planner (conformance/corpus/case_xfail.py):
a built-in planner by name pattern; an external one by name pattern and by its code, the source
digest the harness recorded (file and local imports), listed in the entry's ``sources``. A
corpus run of the whole rule is tests/test_hostile22.py's (slow)."""

from __future__ import annotations

import json
from dataclasses import replace

import jsonschema

from conformance.corpus.case_xfail import code_listed, match_xfail, unmatched_text
from conformance.corpus.corpus_subject import CASE_SCHEMA_PATH
from conformance.corpus.corpus_subject import registry
from conformance.reporting import corpus_coverage

FILE, KERNEL, OTHER = "a" * 64, "b" * 64, "c" * 64
SOURCE = {"module": "upstream_mine", "file": "upstream_mine.py", "sha256": FILE,
          "imports": [{"module": "kernel", "file": "kernel.py", "sha256": KERNEL}]}
BARE = {"planner": "upstream*", "reason": "upstream reads the next row"}
PINNED = {**BARE, "sources": [FILE, KERNEL]}
EXTERNAL = "upstream_mine:launch"


def test_a_built_in_planner_gets_a_declaration_by_its_name_alone():
    assert registry.builtin_names()[:3] == ("python", "triton", "numba-cuda")
    entry = {"planner": "triton*", "reason": "r"}
    assert match_xfail([entry], "triton-bound", True, None).applied == entry
    assert match_xfail([{**entry, "sources": [OTHER]}], "triton", True, None).applied["sources"] \
        == [OTHER]
    assert match_xfail([entry], "python", True, None).applied is None


def test_an_external_planner_gets_a_declaration_by_its_name_and_its_code():
    found = match_xfail([PINNED], EXTERNAL, False, SOURCE)
    assert (found.applied, found.unmatched) == (PINNED, ())
    other_name = match_xfail([PINNED], "mine:launch", False, SOURCE)
    assert (other_name.applied, other_name.unmatched) == (None, ())  # not named: not said either


def test_an_external_planner_named_to_match_gets_no_declaration_and_it_is_said():
    found = match_xfail([BARE], EXTERNAL, False, SOURCE)
    assert (found.applied, found.unmatched) == (None, (BARE,))
    assert unmatched_text("h22-case", EXTERNAL, BARE, SOURCE) == (
        "h22-case[upstream_mine:launch]: the case's xfail for 'upstream*' is not applied: the "
        "entry lists no sources, and an external planner gets a case's xfail only for code the "
        "entry lists (its result stands as observed)")
    assert unmatched_text("h22-case", EXTERNAL, BARE, None).endswith(
        "not applied: the harness has no digest of its code to check against the entry's "
        "sources (its result stands as observed)")


def test_a_wrong_digest_gets_no_declaration():
    for sources in ([OTHER], [FILE], [KERNEL, OTHER]):  # other code; the file beside another kernel
        entry = {**BARE, "sources": sources}
        found = match_xfail([entry], EXTERNAL, False, SOURCE)
        assert (found.applied, found.unmatched) == (None, (entry,)), sources
    assert unmatched_text("c", EXTERNAL, {**BARE, "sources": [OTHER]}, SOURCE) == (
        "c[upstream_mine:launch]: the case's xfail for 'upstream*' is not applied: its code (its "
        "file or a local import) is not among the entry's sources (its result stands as observed)")
    unpinned = {**SOURCE, "imports": [{"module": "kernel", "file": None, "sha256": None}]}
    assert not code_listed(PINNED, unpinned)  # a file that could not be read is never listed
    assert not code_listed(PINNED, None)
    assert code_listed(PINNED, {**SOURCE, "imports": []})


def test_the_first_applying_entry_wins_and_the_unmatched_ones_are_kept_in_order():
    first, second = {**BARE, "reason": "first"}, {**PINNED, "reason": "second"}
    found = match_xfail([first, second, {**PINNED, "reason": "third"}], EXTERNAL, False, SOURCE)
    assert (found.applied["reason"], [e["reason"] for e in found.unmatched]) == ("second", ["first"])


def test_the_schema_takes_sources_of_sha256_digests_only():
    schema = json.loads(CASE_SCHEMA_PATH.read_text())
    entry = {"$ref": "#/$defs/xfail", "$defs": schema["$defs"]}
    validator = jsonschema.Draft202012Validator(entry)
    assert validator.is_valid(PINNED) and validator.is_valid(BARE)
    for sources in ([], ["ABC"], [FILE, FILE], ["a" * 63]):
        assert not validator.is_valid({**BARE, "sources": sources}), sources


def test_corpus_coverage_excuses_an_xfail_only_where_a_run_would_apply_it():
    """A results file's ``xfail`` of an external planner stands for the corpus only where the
    corpus case's declaration lists the code the run recorded (corpus_coverage.excused)."""
    case = corpus_coverage.corpus_cases()[0]
    result = {"status": "xfail"}
    assert not corpus_coverage.excused(result, replace(case, xfail=(BARE,)), EXTERNAL, SOURCE)
    pinned = replace(case, xfail=(PINNED,))
    assert corpus_coverage.excused(result, pinned, EXTERNAL, SOURCE)
    assert not corpus_coverage.excused(result, pinned, EXTERNAL, {**SOURCE, "sha256": OTHER})
    python = replace(case, xfail=({"planner": "py*", "reason": "r"},))
    assert corpus_coverage.excused(result, python, "python", None)
    assert not corpus_coverage.excused(result, python, "triton", None)
