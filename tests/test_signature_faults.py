"""An external planner whose signature makes every call fail is named before its cases run
(impls/offsets_planner/external_planner.py's ``signature_faults``, read in the probe), and its
cases still fail: the note is a hint, never a verdict."""

from __future__ import annotations

import functools

from impls.offsets_planner.external_planner import signature_faults
from impls.offsets_planner.external_probe import _signature
from impls.offsets_planner.python_planner import launch as python_launch
from tests.planted.signature_planners import renamed_lut
from tests.subproc import run_pytest

PLANTED = "tests.planted.signature_planners:renamed_lut"


def test_signature_faults_of_each_kind_of_launcher():
    assert signature_faults(python_launch) == []
    assert signature_faults(lambda **kwargs: None) == []
    assert signature_faults(lambda *, stream, **kwargs: None) == ["requires stream"]
    assert signature_faults(functools.partial(renamed_lut, stream=None, lut=None)) == [
        "cannot take full_to_swa_index_mapping"]
    assert signature_faults(renamed_lut) == ["cannot take full_to_swa_index_mapping",
                                             "requires lut", "requires stream"]
    assert signature_faults(max) == []  # a builtin whose signature cannot be read: no claim
    assert signature_faults(print)[:2] == ["cannot take req_pool_indices",
                                           "cannot take prefix_lens"]  # print's can


def test_only_the_two_forms_of_a_probe_s_answer_are_kept():
    """The probe ran the planner's code, which could print any answer: only identifiers in the
    two forms pass to the terminal."""
    assert _signature(["cannot take lut", "requires stream"]) == ("cannot take lut",
                                                                  "requires stream")
    assert _signature(["cannot take \x1b[2Jall passed", "requires a b", "all green", 7]) == ()
    assert _signature("requires stream") == ()


def test_the_note_comes_before_the_cases_and_they_still_fail(tmp_path):
    proc, items = run_pytest(tmp_path, "--planner", PLANTED, "--case", "bs-1")
    assert proc.returncode == 1, proc.stdout[-2000:]
    assert (f"planner {PLANTED}: its signature cannot take full_to_swa_index_mapping, requires "
            "lut, requires stream (spec section 3: the harness passes every argument by keyword "
            "and nothing else), so every call will raise TypeError") in proc.stdout
    assert proc.stdout.index("its signature cannot take") < proc.stdout.index("bs-1")
    assert items[f"bs-1[{PLANTED}]"].outcome == "failed"
    assert "TypeError" in items[f"bs-1[{PLANTED}]"].text
