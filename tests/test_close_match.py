"""A name that names nothing gets the closest one that exists (``difflib.get_close_matches``),
beside the message it already had: a ``--case`` id of a corpus run, of ``record`` and of
``repro`` (``conformance/corpus/close_match.py``), and an external planner's attribute
(``impls/offsets_planner/external_planner.py``)."""

from __future__ import annotations

import json

import pytest

from conformance.corpus.close_match import close_to, did_you_mean
from impls.offsets_planner.registry import UnknownPlanner, get_planner
from tests.subproc import cli, run_pytest

CASE = "spec7-prefill-and-decodes"
"""A corpus case; :data:`TYPO` is its id less the last letter."""
TYPO = CASE[:-1]
WRONG = "tests.planted.wrong_planners"


def test_the_closest_name_or_none():
    names = ["nu18-four-mixed", "nu18-four-decodes", "spec7-padding-row-middle"]
    assert close_to("nu18-four-mixd", names) == "nu18-four-mixed"
    assert did_you_mean("nu18-four-mixd", names) == " (did you mean 'nu18-four-mixed'?)"
    assert did_you_mean("completely-other", names) == ""
    assert close_to("nu18-four-mixed", names) is None  # a name that exists needs no suggestion
    assert did_you_mean("x", []) == ""


def test_a_corpus_run_suggests_the_case_id(tmp_path):
    proc, _ = run_pytest(tmp_path, "-q", "-n", "0", "--planner", "python", "--case", TYPO)
    assert proc.returncode == 1, proc.stdout[-2000:]
    [missing] = [r for r in json.loads((tmp_path / "results.json").read_text())["results"]
                 if r["id"] == f"{TYPO}[missing]"]
    assert missing["message"].startswith(
        f"--case {TYPO}: no case has this id (did you mean {CASE!r}?); a case in a folder of "
        "your own needs that folder: --extra-cases DIR")
    assert f"no case has this id (did you mean {CASE!r}?)" in proc.stdout


def test_record_and_repro_suggest_the_case_id(tmp_path):
    proc = cli("record", TYPO)
    assert proc.returncode == 2
    assert proc.stderr.startswith(
        f"error: no such case id(s): {TYPO} (did you mean {CASE!r}?); a case in a folder")
    proc = cli("repro", TYPO, "--planner", "python", "--out", str(tmp_path / "r.py"))
    assert proc.returncode == 2
    assert proc.stderr.startswith(f"error: no case has id {TYPO!r} (did you mean {CASE!r}?); ")
    assert not (tmp_path / "r.py").exists()


@pytest.mark.parametrize("attr, said", [
    ("of_by_one_scan", "module 'tests.planted.wrong_planners' has no attribute 'of_by_one_scan' "
                       "(did you mean 'off_by_one_scan'?)"),
    ("nope", "module 'tests.planted.wrong_planners' has no attribute 'nope'"),  # none close
    ("torch.zero", "module 'tests.planted.wrong_planners' has no attribute 'torch.zero' "
                   "(did you mean 'torch.zeros'?)"),  # a dotted attribute: the whole path
])
def test_a_planner_attribute_suggests_the_closest(attr, said):
    with pytest.raises(UnknownPlanner) as excinfo:
        get_planner(f"{WRONG}:{attr}")
    assert str(excinfo.value) == said
