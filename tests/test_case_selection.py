"""``--case`` selects cases, never hides a fault: a case file that does not load is named in the
warnings summary of a run that selected other cases (conformance/plugin/corpus_items.py)."""

from __future__ import annotations

import json
import shutil

from conformance.corpus.corpus_subject import CASES_DIR
from tests.subproc import run_pytest


def _one_good_one_bad(tmp_path):
    """A folder of spec section 7's examples (``good.json``) and one case whose ``prefix_lens``
    is not bs long (``bad.json``: a load fault)."""
    cases = tmp_path / "cases"
    cases.mkdir()
    shutil.copyfile(CASES_DIR / "spec" / "section7-examples.json", cases / "good.json")
    doc = json.loads((cases / "good.json").read_text())
    doc["cases"] = doc["cases"][:1]
    doc["cases"][0]["id"] = "my-bad-len"
    doc["cases"][0]["inputs"]["prefix_lens"] = [1, 2, 3, 4, 5, 6, 7]  # not bs long
    (cases / "bad.json").write_text(json.dumps(doc))
    return cases


def test_a_load_fault_outside_the_selection_is_a_warning(tmp_path):
    cases = _one_good_one_bad(tmp_path)
    proc, _ = run_pytest(tmp_path, "--cases", str(cases), "--planner", "python",
                         "--case", "spec7-no-prefix")
    assert proc.returncode == 0, proc.stdout[-3000:]
    assert "UnselectedFaultWarning" in proc.stdout
    assert "bad.json@$.cases[0]" in proc.stdout and "not run (--case selects other cases)" \
        in proc.stdout, proc.stdout[-3000:]
    everything, _ = run_pytest(tmp_path, "--cases", str(cases), "--planner", "python")
    assert everything.returncode == 1  # run without --case, the fault is a failing item


def test_a_load_fault_deselected_by_k_is_a_warning(tmp_path):
    """``-k`` deselects a case file's ``[load]`` item as it deselects any other: the fault is
    named in the warnings summary (before, the run read all green with no sign of it)."""
    cases = _one_good_one_bad(tmp_path)
    proc, _ = run_pytest(tmp_path, "--cases", str(cases), "--planner", "python",
                         "-k", "spec7-no-prefix")
    assert proc.returncode == 0, proc.stdout[-3000:]
    assert "UnselectedFaultWarning" in proc.stdout
    assert "bad.json@$.cases[0]" in proc.stdout and "[load]: not run (deselected)" \
        in proc.stdout, proc.stdout[-3000:]


def test_a_case_file_named_in_capitals_is_a_fault_not_silence(tmp_path):
    from conformance.corpus.loader import load_corpus

    cases = tmp_path / "cases"
    cases.mkdir()
    shutil.copyfile(CASES_DIR / "spec" / "section7-examples.json", cases / "a.json")
    shutil.copyfile(CASES_DIR / "spec" / "section7-examples.json", cases / "b.JSON")
    loaded, faults = load_corpus([cases])
    assert {c.path.name for c in loaded} == {"a.json"}
    assert [(f.path.name, f.message) for f in faults] == [
        ("b.JSON", "named '.JSON': case files end in '.json' (lowercase); not loaded")]
