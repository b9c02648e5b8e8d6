"""The tags whose truth a case's own data decides are checked against that data at load time
(impls/offsets_planner/harness/tag_rules.py, called by the loader beside the ``hazard`` check;
cases/offsets-planner/README.md, *Tags*): a case tagged X whose data does not do X loads with a
TagWarning naming the case, the tag and what the data lacks; a case tagged rightly loads silently.
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import pytest

from conformance.corpus.loader import load_corpus
from impls.offsets_planner.harness.tag_rules import RULES, TagWarning
from tests.subproc import run_pytest

LINEAR = {"generator": "linear", "max_reqs": 4, "max_seq_len": 16}
DTYPE_ERROR = {"error": {"type": "ValueError", "id": "dtype",
                         "message": "kv-canary: prefix_lens must have dtype torch.int64, "
                                    "got torch.int32"}}


def _golden(bs: int) -> dict:
    """A golden of the lengths the loader checks (bs + 1, bs + 1, bs); these cases never run."""
    return {"out_verify_offsets_scratch": [0] * (bs + 1), "out_write_offsets": [0] * (bs + 1),
            "out_write_seed_slot_indices": [-1] * bs, "out_verify_num_valid": 0,
            "out_verify_enable": 1, "out_write_num_valid_reqs": bs}


def _case(case_id: str, tags: list[str], expect: dict | None = None, **inputs) -> dict:
    """A launcher case on the 4 x 16 linear table: one decode of row 1 (prefix 3) unless
    ``inputs`` say otherwise; ``expect`` defaults to a golden of the right lengths."""
    request = {"req_pool_indices": [1], "prefix_lens": [3], "extend_seq_lens": [1]}
    merged = {"req_to_token": LINEAR, **request, **inputs}
    bs = len(merged["req_pool_indices"]) if isinstance(merged["req_pool_indices"], list) else 4
    return {"id": case_id, "description": "d", "tags": tags,
            "source": {"kind": "project", "ref": "test"}, "golden_check": "hand: test",
            "inputs": merged, "expect": expect or _golden(bs)}


def _error_case(case_id: str, tags: list[str], overrides: list, error: dict) -> dict:
    return {**_case(case_id, tags, expect={"error": error}), "overrides": overrides}


def _validator_case(case_id: str, tags: list[str]) -> dict:
    """README's validator example: has_swa_lut passed as the int 1."""
    return {**_case(case_id, tags, expect={"error": {
        "type": "ValueError", "id": "has-swa-lut-bool",
        "message": "kv-canary: has_swa_lut must be bool, got int"}}),
        "entry": "validator", "derived": {"has_swa_lut": 1}}


def _allocate_case(case_id: str, tags: list[str]) -> dict:
    """README's allocation example: a write plan of capacity 0."""
    return {"id": case_id, "description": "d", "tags": tags, "entry": "allocate",
            "source": {"kind": "project", "ref": "test"}, "golden_check": "hand: test",
            "allocate": {"write_req_capacity": 0, "verify_capacity": 8},
            "expect": {"error": {
                "type": "ValueError", "id": "write-plan-capacity",
                "message": "kv-canary: WritePlan write_req_capacity must be positive, got 0"}}}


def _two_steps(case_id: str, tags: list[str]) -> dict:
    doc = _case(case_id, tags)
    del doc["expect"]
    doc["steps"] = [{"expect": _golden(1)},
                    {"inputs": {"prefix_lens": [4]}, "expect": _golden(1)}]
    return doc


def _one_listed_step(case_id: str, tags: list[str]) -> dict:
    doc = _case(case_id, tags)
    doc["steps"] = [{"expect": doc.pop("expect")}]
    return doc


SHAPE_0D = [{"tensor": "req_pool_indices", "shape": []}]
NOT_1D = {"type": "ValueError", "id": "not-1d",
          "message": "kv-canary: req_pool_indices must be 1-D, got shape ()"}
DEVICE = {"type": "ValueError", "id": "device",
          "message": "kv-canary: prefix_lens must be on out_verify_offsets_scratch's device "
                     "{device}, got meta"}
SHIFT_LUT = {"generator": "shift", "len": 64, "shift": 100}

# tag: (a case tagged so whose data lacks it, what the warning says it lacks,
#       cases tagged so whose data does it)
RULE_CASES = {
    "documented-error": (
        lambda t: _case("bad", t), "no step expects an error (spec §4)",
        [lambda t: _error_case("good", t, [{"tensor": "prefix_lens", "dtype": "int32"}],
                               DTYPE_ERROR["error"])]),
    "order": (
        lambda t: _case("bad", t), "no step expects an error (spec §4)",
        [lambda t: _error_case("good", t, [{"tensor": "prefix_lens", "dtype": "int32"}],
                               DTYPE_ERROR["error"])]),
    "steps": (
        lambda t: _one_listed_step("bad", t),
        "it has one step (the tag means several launches over the same output buffers)",
        [lambda t: _two_steps("good", t)]),
    "zero-d": (
        lambda t: _error_case("bad", t, [{"tensor": "req_pool_indices", "shape": [2, 3]}],
                              {**NOT_1D, "message": NOT_1D["message"].replace("()", "(2, 3)")}),
        "no override gives a tensor the shape [] (a 0-d tensor)",
        [lambda t: _error_case("good", t, SHAPE_0D, NOT_1D)]),
    "lut": (
        lambda t: _case("bad", t, lut=None), "its LUT (full_to_swa_index_mapping) is null",
        [lambda t: _case("good", t, lut=SHIFT_LUT)]),
    "swa": (
        lambda t: _case("bad", t, lut=None, swa_window_size=0),
        "swa_window_size is 0 in every step and its LUT is null",
        [lambda t: _case("good", t, lut=SHIFT_LUT, swa_window_size=4),
         lambda t: _case("good-window-off", t, lut=None, swa_window_size=-4),  # W <= 0 cases
         lambda t: _case("good-lut-w0", t, lut=SHIFT_LUT, swa_window_size=0)]),
    "random": (
        lambda t: _case("bad", t),
        "no array spec is 'random' and neither its table nor its LUT is seeded "
        "(permuted, permutation)",
        [lambda t: _case("good", t, req_pool_indices={"fill": 1, "len": 4},
                         prefix_lens={"random": {"len": 4, "low": 1, "high": 16, "seed": 5,
                                                 "prng": "splitmix64"}},
                         extend_seq_lens={"fill": 1, "len": 4}),
         lambda t: _case("good-permutation-lut", t,
                         lut={"generator": "permutation", "len": 64, "seed": 7})]),
    "padding": (
        lambda t: _case("bad", t, req_pool_indices=[1, 2], prefix_lens=[3, 3],
                        extend_seq_lens=[1, 1]),
        "no step's req_pool_indices holds 0 (a padding row)",
        [lambda t: _case("good", t, req_pool_indices=[1, 0], prefix_lens=[3, 99],
                         extend_seq_lens=[1, 99])]),
    "validator": (
        lambda t: _case("bad", t), "its entry is 'launcher', not 'validator'",
        [lambda t: _validator_case("good", t)]),
    "allocation": (
        lambda t: _validator_case("bad", t), "its entry is 'validator', not 'allocate'",
        [lambda t: _allocate_case("good", t)]),
    "device": (
        lambda t: _error_case("bad", t, [{"tensor": "prefix_lens", "dtype": "int32"}],
                              DTYPE_ERROR["error"]),
        "no override puts a tensor on a device",
        [lambda t: _error_case("good", t, [{"tensor": "prefix_lens", "device": "meta"}],
                               DEVICE)]),
    "zero-size": (
        lambda t: _case("bad", t),
        "no tensor is empty (request arrays, table, LUT, output buffers, override shapes all "
        "have elements)",
        [lambda t: _case("good", t, req_pool_indices=[], prefix_lens=[], extend_seq_lens=[]),
         lambda t: _error_case("good-shape", t, [{"tensor": "req_pool_indices", "shape": [0, 3]}],
                               {**NOT_1D, "message": NOT_1D["message"].replace("()", "(0, 3)")}),
         lambda t: _allocate_case("good-allocate", t)]),
    "negative": (
        lambda t: _case("bad", t),
        "no value it hands the planner (lengths, rows, slots, scalars) is negative",
        [lambda t: _case("good", t, extend_seq_lens=[-1]),
         lambda t: _case("good-slot", t, req_to_token={**LINEAR, "set": [[1, 2, -5]]})]),
}


def _load(tmp_path: Path, *docs: dict):
    for k, doc in enumerate(docs):
        (tmp_path / f"c{k}.json").write_text(json.dumps(doc))
    return load_corpus([tmp_path])


def test_every_rule_has_its_cases():
    assert set(RULE_CASES) == set(RULES)


@pytest.mark.parametrize("tag", sorted(RULE_CASES))
def test_a_tag_the_data_does_not_bear_out_loads_with_a_warning(tmp_path: Path, tag: str):
    make_bad, lack, _ = RULE_CASES[tag]
    with pytest.warns(TagWarning) as caught:
        cases, errors = _load(tmp_path, make_bad([tag]))
    assert errors == [] and [(c.id, c.tags) for c in cases] == [("bad", (tag,))]  # it still runs
    # located at the case file (one line of JSON here), not at the harness line that warned
    assert [(str(w.message), w.filename, w.lineno) for w in caught] == [
        (f"case 'bad' is tagged {tag!r}, but {lack}", str(tmp_path / "c0.json"), 1)]


@pytest.mark.parametrize("tag", sorted(RULE_CASES))
def test_a_tag_the_data_bears_out_loads_without_a_warning(tmp_path: Path, tag: str):
    goods = [make([tag]) for make in RULE_CASES[tag][2]]
    with warnings.catch_warnings():
        warnings.simplefilter("error", TagWarning)
        cases, errors = _load(tmp_path, *goods)
    assert errors == []
    assert sorted(c.id for c in cases) == sorted(doc["id"] for doc in goods)


def test_only_the_tags_direction_is_checked(tmp_path: Path):
    """A padding row, a LUT, an error and a negative length without their tags: no warning."""
    doc = _error_case("untagged", [], [{"tensor": "prefix_lens", "dtype": "int32"}],
                      DTYPE_ERROR["error"])
    doc["inputs"] |= {"req_pool_indices": [1, 0], "prefix_lens": [3, -2],
                      "extend_seq_lens": [1, 1], "lut": SHIFT_LUT}
    with warnings.catch_warnings():
        warnings.simplefilter("error", TagWarning)
        cases, errors = _load(tmp_path, doc)
    assert errors == [] and [c.id for c in cases] == ["untagged"]


def test_each_wrong_tag_warns_once_and_a_group_default_is_checked_per_case(tmp_path: Path):
    group = {"group": "g", "defaults": {"tags": ["steps"]},
             "cases": [_case("g-lut", ["lut", "padding"], lut=SHIFT_LUT),
                       _case("g-plain", ["zero-d"])]}
    with pytest.warns(TagWarning) as caught:
        cases, errors = _load(tmp_path, group)
    assert errors == [] and [(c.id, c.tags) for c in cases] == [
        ("g-lut", ("steps", "lut", "padding")), ("g-plain", ("steps", "zero-d"))]
    assert {w.filename for w in caught} == {str(tmp_path / "c0.json")}
    assert [str(w.message) for w in caught] == [
        "$.cases[0]: case 'g-lut' is tagged 'steps', but it has one step (the tag means "
        "several launches over the same output buffers)",
        "$.cases[0]: case 'g-lut' is tagged 'padding', but no step's req_pool_indices "
        "holds 0 (a padding row)",
        "$.cases[1]: case 'g-plain' is tagged 'steps', but it has one step (the tag "
        "means several launches over the same output buffers)",
        "$.cases[1]: case 'g-plain' is tagged 'zero-d', but no override gives a tensor "
        "the shape [] (a 0-d tensor)"]


def test_the_warning_is_located_at_the_case_file_and_the_line_of_its_id(tmp_path: Path):
    """The warning's location is the case, not the harness: its file and the line of its ``"id"``
    (what pytest's warnings summary heads it with, and the line it quotes)."""
    group = {"group": "g", "cases": [_case("g-fine", []), _case("g-wrong", ["steps"])]}
    where = tmp_path / "group.json"
    where.write_text(json.dumps(group, indent=2))
    with pytest.warns(TagWarning) as caught:
        cases, errors = load_corpus([tmp_path])
    assert errors == [] and [c.id for c in cases] == ["g-fine", "g-wrong"]
    [w] = caught
    assert (w.filename, str(w.message).split(":")[0]) == (str(where), "$.cases[1]")
    assert where.read_text().splitlines()[w.lineno - 1].strip() == '"id": "g-wrong",'
    assert "tag_rules.py" not in w.filename and "loader.py" not in w.filename


def test_pytest_heads_the_warning_with_the_case_file(tmp_path: Path):
    """End to end: ``pytest conformance/``'s warnings summary shows the warning at the case file
    and the line of its id, quoting that line, and names no harness module."""
    folder = tmp_path / "cases"
    folder.mkdir()
    case = _case("e2e-wrong", ["steps"], req_pool_indices=[3], prefix_lens=[0],
                 extend_seq_lens=[5],  # spec section 7's first example: no prefix, seed -1
                 expect={"out_verify_offsets_scratch": [0, 0], "out_write_offsets": [0, 5],
                         "out_write_seed_slot_indices": [-1], "out_verify_num_valid": 0,
                         "out_verify_enable": 1, "out_write_num_valid_reqs": 1})
    where = folder / "one.json"
    where.write_text(json.dumps(case, indent=2))
    proc, items = run_pytest(tmp_path, "-n", "0", "--cases", str(folder), "--planner", "python")
    out = proc.stdout
    assert proc.returncode == 0, out + proc.stderr
    assert {name: i.outcome for name, i in items.items()} == {"e2e-wrong[python]": "passed"}
    summary = out[out.index("warnings summary"):out.index("-- Docs")]
    lines = where.read_text().splitlines()
    line = next(n for n, text in enumerate(lines, 1) if text.strip().startswith('"id"'))
    assert (f"{where}:{line}: TagWarning: case 'e2e-wrong' is tagged 'steps', but it has one "
            "step" in summary), out
    assert '\n    "id": "e2e-wrong",\n' in summary  # the quoted source line is the case's
    assert "tag_rules.py" not in summary and "loader.py" not in summary


def test_a_case_the_hazard_check_refuses_is_not_also_warned_about(tmp_path: Path):
    doc = _case("refused", ["padding"], req_pool_indices=[1], prefix_lens=[20])
    with warnings.catch_warnings():
        warnings.simplefilter("error", TagWarning)
        cases, errors = _load(tmp_path, doc)
    assert cases == [] and [e.json_path for e in errors] == ["$.tags"]
    assert "need the 'hazard' tag" in errors[0].message


def test_the_shipped_corpus_loads_without_a_tag_warning():
    with warnings.catch_warnings():
        warnings.simplefilter("error", TagWarning)
        cases, errors = load_corpus()
    assert errors == [] and len(cases) > 200
    tagged = {tag: sum(tag in c.tags for c in cases) for tag in RULES}
    assert all(n > 0 for n in tagged.values()), tagged  # every rule is exercised by the corpus


@pytest.mark.parametrize("tag", sorted(RULE_CASES)[:1])
def test_a_tag_warning_raised_by_w_error_is_the_case_files_fault_not_a_harness_bug(
        tmp_path: Path, tag: str):
    """Under ``-W error`` (a CI's usual filter) the warning is raised: the case is a load fault
    that says what its data lacks, never "harness bug" (conformance/corpus/loader.py)."""
    from conformance.corpus.loader import HARNESS_BUG

    make_bad, lack, _ = RULE_CASES[tag]
    with warnings.catch_warnings():
        warnings.simplefilter("error", TagWarning)
        cases, errors = _load(tmp_path, make_bad([tag]))
    assert cases == [] and [HARNESS_BUG in e.message for e in errors] == [False]
    assert errors[0].message == (f"case 'bad' is tagged {tag!r}, but {lack} (TagWarning, raised "
                                 "as an error by the warnings filter)")
