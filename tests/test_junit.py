"""``pytest conformance/ --junitxml=PATH`` (pytest's own JUnit XML) names every testcase after its
case and planner, groups testcases by case file, and carries where the case is and how to rerun
it, with and without pytest-xdist (runs from ``tests/report_runs.py``)."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest

from conformance.reporting.results_format import load_results
from tests.report_runs import PLANNER, case_folder, run


def _classname_prefix() -> str:
    """The classname prefix of the cases the runs load: their copies of the folders of
    ``tests/data/report-cases`` (:func:`tests.report_runs.case_folder`)."""
    return str(case_folder("common").parent).lstrip("/").replace("/", ".") + "."


def _testcases(name: str) -> dict[str, ET.Element]:
    root = ET.parse(run(name).junit).getroot()
    return {case.get("name"): case for case in root.iter("testcase")}


@pytest.mark.parametrize("name", ["a", pytest.param("b", marks=pytest.mark.slow)])  # b: -n 2
def test_testcases_are_named_by_case_id_and_grouped_by_case_file(name):
    cases = _testcases(name)
    doc = load_results(run(name).results)
    assert sorted(cases) == sorted(r["id"] for r in doc["results"])  # case-id[planner], each once
    by_id = {r["id"]: r for r in doc["results"]}
    for test_name, case in cases.items():
        result = by_id[test_name]
        assert case.get("classname") == (result["file"].removesuffix(".json").lstrip("/")
                                         .replace("/", "."))
        assert case.get("classname").startswith(_classname_prefix())
        names = [p.get("name") for p in case.iter("property")]
        assert len(names) == len(set(names)), names  # each property once
        props = {p.get("name"): p.get("value") for p in case.iter("property")}
        assert "case_meta" not in props
        assert props["where"] == f"{result['file']} {result['json_path']}"
        assert props["rerun"] == result["rerun"]
    failing = cases[f"spec7-prefill-and-decodes[{PLANNER}]"] if name == "a" else \
        cases[f"err-dtype-prefix-lens[{PLANNER}]"]
    assert failing.find("failure") is not None
    assert cases["spec7-no-prefix[python]"].get("classname") == \
        f"{_classname_prefix()}common.a-spec"


def test_a_one_call_subject_s_testcases_are_grouped_by_a_relative_case_file(tmp_path):
    """A one-call subject's case file (JSON Lines) is named relative to the checkout, as the
    corpus's are, never by its absolute path (which changes with the checkout's folder)."""
    from tests.subproc import run_pytest

    proc, _ = run_pytest(tmp_path, "--subject", "entries-planner", "--planner", "python",
                         "--case", "entries-error-rank")
    root = ET.parse(tmp_path / "junit.xml").getroot()
    names = {case.get("classname") for case in root.iter("testcase")}
    assert names and all(n.startswith("cases.entries-planner.") for n in names), (names, proc.stdout[-2000:])
    assert not any(n.endswith(("jsonl", "json")) for n in names)
