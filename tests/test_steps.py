"""The step builder (conformance/engine/steps.py): what every (run, step) is built from, and that a
case whose inputs cannot be built is the case's fault (CaseBuildError), never the planner's.

The loader's checks (conformance/corpus/checks.py) refuse such cases first, as a ``[load]`` fault;
the CaseBuildError tests build their Case with :func:`make_case` (no load-time checks) to pin the
engine's own safety net, and assert that the loader refuses the same dict, so both layers hold."""

from __future__ import annotations

import json

import pytest
import torch

from conformance.corpus.case_model import make_case
from conformance.corpus.loader import load_corpus
from conformance.engine.inputs import GUARD
from conformance.engine.runner import Target, run_case
from conformance.engine.steps import RUNS, CaseBuildError, CaseInputs, expand_golden
from conformance.corpus.subject import CORPUS_SUBJECT

CPU = torch.device("cpu")
_LINEAR = {"generator": "linear", "max_reqs": 4, "max_seq_len": 16}
_GOLDEN = {"out_verify_offsets_scratch": [0, 3], "out_write_offsets": [0, 1],
           "out_write_seed_slot_indices": [18], "out_verify_num_valid": 3,
           "out_verify_enable": 1, "out_write_num_valid_reqs": 1}


def _doc(steps: list[dict], lut=None) -> dict:
    return {"id": "st-case", "description": "a step builder case.",
            "tags": ["steps"] if len(steps) > 1 else [],
            "source": {"kind": "spec", "ref": "docs/spec/offsets-planner.md §5"},
            "golden_check": "hand: §5, table[1, 2] = 1*16 + 2 = 18",
            "inputs": {"req_to_token": _LINEAR, "lut": lut}, "steps": steps}


def _case(tmp_path, steps: list[dict], lut=None) -> object:
    (tmp_path / "case.json").write_text(json.dumps(_doc(steps, lut)))
    (case,), errors = load_corpus([tmp_path])
    assert errors == []
    return case


def _unchecked_case(tmp_path, doc: dict) -> object:
    """The Case of ``doc`` without the load-time checks (the engine's safety net is what is
    tested), after asserting that the loader itself refuses ``doc``; returns (case, the fault)."""
    path = tmp_path / "case.json"
    path.write_text(json.dumps(doc))
    cases, errors = load_corpus([tmp_path])
    assert cases == [] and len(errors) == 1, errors
    return make_case(doc, path, "$"), errors[0]


def _step(**inputs) -> dict:
    return {"inputs": {"req_pool_indices": [1], "prefix_lens": [3], "extend_seq_lens": [1],
                       **inputs}, "expect": _GOLDEN}


def _never_called(**kwargs) -> None:
    raise AssertionError("the planner was called")


def test_two_runs_of_every_step_over_the_same_buffers(tmp_path):
    case = _case(tmp_path, [_step(), _step(req_to_token_set=[[1, 2, 500]])])
    built = list(CaseInputs(case, CPU).steps())
    assert [(b.run, b.index) for b in built] == [("a", 0), ("a", 1), ("b", 0), ("b", 1)]
    assert len({id(b.buffers["out_write_offsets"]) for b in built}) == 1
    assert built[0].poison != built[2].poison  # fresh poison for run b


def test_step_patch_applies_at_its_step_and_is_undone_for_the_next_run(tmp_path):
    case = _case(tmp_path, [_step(), _step(req_to_token_set=[[1, 2, 500]])])
    seen = [int(b.kwargs["req_to_token"][1, 2]) for b in CaseInputs(case, CPU).steps()]
    assert seen == [18, 500, 18, 500]


def test_expand_golden_writes_defined_regions_only():
    previous = {name: [7] * (n + 2 * GUARD) for name, n in
                {"out_verify_offsets_scratch": 5, "out_write_offsets": 3,
                 "out_write_seed_slot_indices": 2, "out_verify_num_valid": 1,
                 "out_verify_enable": 1, "out_write_num_valid_reqs": 1}.items()}
    got = expand_golden(CORPUS_SUBJECT, previous, _GOLDEN)
    assert got["out_write_offsets"][GUARD - 1:GUARD + 3] == [7, 0, 1, 7]
    assert got["out_verify_offsets_scratch"][GUARD:GUARD + 3] == [0, 3, 7]
    assert got["out_verify_num_valid"][GUARD - 1:] == [7, 3] + [7] * GUARD
    assert previous["out_write_offsets"][GUARD] == 7  # the previous state is not modified


@pytest.mark.parametrize(("step", "lut", "json_path", "detail", "load_path", "load_fault"), [
    (_step(req_to_token_set=[[9, 0, 5]]), None, "$.steps[1].inputs",
     "IndexError: index 9 is out of bounds for dimension 0 with size 4",
     "$.steps[1].inputs.req_to_token_set[0]", "[9, 0] is outside the 4 x 16 table"),
    (_step(lut_set=[[0, 5]]), None, "$.steps[1].inputs", "TypeError: 'NoneType' object",
     "$.steps[1].inputs.lut_set", "changes the LUT, which is null in this case"),
    (_step(req_to_token_set=[[1, 1, 1 << 40]]), None, "$.steps[1].inputs", "RuntimeError",
     "$.steps[1].inputs.req_to_token_set[0]",
     "value 1099511627776 is outside int32 (the table's dtype)"),
], ids=["table-entry-outside", "lut-set-without-lut", "value-above-int32"])
def test_a_case_that_cannot_be_built_is_a_case_build_error(tmp_path, step, lut, json_path, detail,
                                                          load_path, load_fault):
    case, fault = _unchecked_case(tmp_path, _doc([_step(), step], lut=lut))
    assert (fault.json_path, fault.message) == (load_path, load_fault)
    assert str(fault) == f"{tmp_path / 'case.json'}: at {load_path}: {load_fault}"
    with pytest.raises(CaseBuildError) as excinfo:
        run_case(case, Target("never-called", _never_called, CPU))
    text = str(excinfo.value)
    assert text.startswith(f"{tmp_path / 'case.json'}: at {json_path}: cannot build the inputs: "
                           f"{detail}"), text
    assert "\n" not in text and len(text) < 400
    assert excinfo.value.json_path == json_path


def test_an_override_that_cannot_be_built_names_the_overrides(tmp_path):
    doc = {"id": "st-override", "description": "an override to a device this machine lacks.",
           "tags": ["steps"], "source": {"kind": "spec", "ref": "docs/spec/offsets-planner.md §5"},
           "golden_check": "hand: §5", "inputs": {"req_to_token": _LINEAR, "lut": None,
                                                   **_step()["inputs"]},
           "overrides": [{"tensor": "prefix_lens", "device": "cuda:63"}],
           "expect": {"error": {"type": "ValueError", "id": "device", "message":
                                "kv-canary: prefix_lens must be on out_verify_offsets_scratch's "
                                "device cpu, got cuda:63"}}}
    case, fault = _unchecked_case(tmp_path, doc)
    assert fault.json_path == "$.overrides[0].device"
    assert fault.message.startswith("device 'cuda:63': this machine has "), fault
    with pytest.raises(CaseBuildError, match=r"case\.json: at \$\.overrides: cannot build the "
                                             r"inputs: (RuntimeError|AssertionError): "):
        run_case(case, Target("never-called", _never_called, CPU))


def test_a_table_that_cannot_be_built_names_the_case_inputs(tmp_path):
    case, fault = _unchecked_case(tmp_path, _doc([_step()], lut={"generator": "explicit",
                                                                "values": [1 << 64]}))
    assert (fault.json_path, fault.message) == ("$.inputs.lut.values[0]",
                                                "a LUT value is outside int64")
    with pytest.raises(CaseBuildError, match=r"case\.json: at \$\.inputs: cannot build the inputs"):
        CaseInputs(case, CPU)


def test_record_runs_only_one_poison_run(tmp_path):
    case = _case(tmp_path, [_step()])
    assert [b.run for b in CaseInputs(case, CPU).steps(runs=RUNS[:1], goldens=False)] == ["a"]
