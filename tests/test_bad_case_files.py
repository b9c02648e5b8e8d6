"""One bad case file never stops the corpus: files that used to stop collection, and case values
that used to fail at run time (blamed on every planner, with a long internal traceback), are each
one ``[load]`` fault naming the file and the JSON path, while every other case still runs."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from conformance.corpus.case_file import MAX_NESTING
from conformance.corpus.loader import load_corpus
from tests.case_docs import case_doc
from tests.subproc import cli, run_pytest

GOOD = case_doc(
    "good-one",
    description="spec §7: rpi [2], prefix [7], extend [1].", tags=[],
    source={"kind": "spec", "ref": "docs/spec/offsets-planner.md §7"}, golden_check="hand: spec §7")
INT64_MAX = (1 << 63) - 1


def _nested_concat(depth: int) -> dict:
    spec: object = [7]
    for _ in range(depth):
        spec = {"concat": [spec]}
    return spec


def _good(case_id: str, **changes) -> dict:
    doc = copy.deepcopy(GOOD) | {"id": case_id}
    for dotted, value in changes.items():
        *parents, last = dotted.split("__")
        node = doc
        for key in parents:
            node = node[key]
        node[last] = value
    return doc


def _error(error_id: str, message: str) -> dict:
    """The ``expect`` of a step that expects catalog error ``error_id``: overrides sit only on such
    steps (conformance/corpus/override_checks.py), so a fault of the override itself is the one
    the load reports, whatever order the checks run in."""
    return {"error": {"type": "ValueError", "id": error_id, "message": message}}


def _steps(case_id: str, second: dict, **inputs) -> dict:
    """Two steps over GOOD's inputs; the second step's inputs get ``second``."""
    doc = _good(case_id)
    expect = doc.pop("expect")
    doc["inputs"] |= inputs
    doc["steps"] = [{"expect": expect}, {"inputs": second, "expect": expect}]
    return doc


# file name: (content, the one fault's "file: at PATH: message" after the file name)
STOPPED_COLLECTION = {
    "inputs-not-an-object.json": (
        '{"group":"g","defaults":{"inputs":{}},"cases":[{"inputs":[1]}]}',
        "at $.cases[0]: 'id' is a required property"),
    "tags-not-a-list.json": (
        '{"group":"g","defaults":{"tags":["x"]},"cases":[{"tags":1}]}',
        "at $.defaults.tags[0]: unknown tag 'x'"),
    "tags-not-a-list-declared-default.json": (
        '{"group":"g","defaults":{"tags":["padding"]},"cases":[{"tags":1}]}',
        "at $.cases[0]: 'id' is a required property"),
    "concat-150-deep.json": (
        json.dumps(_good("deep", inputs__prefix_lens=_nested_concat(150))),
        "at $.inputs.prefix_lens" + ".concat[0]" * 15 + ".concat: nested more than "
        f"{MAX_NESTING} levels deep"),
    "integer-4301-digits.json": (
        "[" + "7" * 4301 + "]",
        "at line 1 column 2: unreadable number: Exceeds the limit (4300 digits) for integer "
        "string conversion: value has 4301 digits"),
}

RUN_TIME_FAULTS = {
    "step-table-set-outside.json": (
        _steps("step-table-set-outside", {"req_to_token_set": [[4, 0, 1]]}),
        "at $.steps[1].inputs.req_to_token_set[0]: [4, 0] is outside the 4 x 16 table"),
    "lut-set-without-lut.json": (
        _steps("lut-set-without-lut", {"lut_set": [[0, 1]]}),
        "at $.steps[1].inputs.lut_set: changes the LUT, which is null in this case"),
    "table-set-above-int32.json": (
        _good("table-set-above-int32", inputs__req_to_token={
            "generator": "linear", "max_reqs": 4, "max_seq_len": 16, "set": [[2, 6, 1 << 31]]}),
        "at $.inputs.req_to_token.set[0]: value 2147483648 is outside int32 (the table's dtype)"),
    "step-table-set-above-int32.json": (
        _steps("step-table-set-above-int32", {"req_to_token_set": [[2, 6, -(1 << 31) - 1]]}),
        "at $.steps[1].inputs.req_to_token_set[0]: value -2147483649 is outside int32"),
    "lut-value-above-int64.json": (
        _good("lut-value-above-int64", inputs__lut={"generator": "explicit",
                                                    "values": [0] * 38 + [INT64_MAX + 1]}),
        "at $.inputs.lut.values[38]: a LUT value is outside int64"),
    "lut-shift-above-int64.json": (
        _good("lut-shift-above-int64", inputs__lut={"generator": "shift", "len": 64,
                                                    "shift": INT64_MAX - 62}),
        f"at $.inputs.lut.shift: shift {INT64_MAX - 62} puts LUT values outside int64"),
    "step-lut-set-above-int64.json": (
        _steps("step-lut-set-above-int64", {"lut_set": [[38, INT64_MAX + 1]]},
               lut={"generator": "identity", "len": 64}),
        "at $.steps[1].inputs.lut_set[0]: value 9223372036854775808 is outside int64"),
    "golden-random-high-below-low.json": (
        _good("golden-random-high-below-low", expect__out_write_offsets={
            "random": {"len": 2, "low": 5, "high": 4, "seed": 1}}),
        "at $.expect.out_write_offsets: bad array spec: random: high (4) is below low (5)"),
    "golden-above-int64.json": (
        _good("golden-above-int64", expect__out_write_offsets=[0, INT64_MAX + 1]),
        "at $.expect.out_write_offsets: element 1 is outside int64"),
    "golden-scalar-above-int32.json": (
        _good("golden-scalar-above-int32", expect__out_verify_num_valid=1 << 31),
        "at $.expect.out_verify_num_valid: 2147483648 is outside int32 (the output's dtype)"),
    "request-lengths-differ.json": (
        _good("request-lengths-differ", inputs__prefix_lens=[7, 1]),
        "at $.inputs: request arrays of different lengths: req_pool_indices 1, prefix_lens 2, "
        "extend_seq_lens 1 (only a length error expects that)"),
    "bs-past-capacity.json": (
        _steps("bs-past-capacity", {"req_pool_indices": [2, 2], "prefix_lens": [7, 7],
                                    "extend_seq_lens": [1, 1]}, write_req_capacity=1),
        "at $.steps[1].inputs: bs 2 exceeds write_req_capacity 1: the launcher refuses it "
        "(spec §4 item 14); expect that error or raise the capacity"),
    "device-missing.json": (
        _good("device-missing", overrides=[{"tensor": "prefix_lens", "device": "cuda:99"}],
              expect=_error("device", "kv-canary: prefix_lens must be on out_verify_offsets_"
                            "scratch's device cpu, got cuda:99")),
        "at $.overrides[0].device: device 'cuda:99': this machine has "),
    "shape-huge.json": (
        _good("shape-huge", overrides=[{"tensor": "prefix_lens", "shape": [100000, 100000]}],
              expect=_error("not-1d", "kv-canary: prefix_lens must be 1-D, got shape "
                            "(100000, 100000)")),
        "at $.overrides[0].shape: shape [100000, 100000] has 10000000000 elements, over the "
        "limit of 1048576"),
}
BAD = STOPPED_COLLECTION | RUN_TIME_FAULTS


def _expected_bs_error() -> dict:
    """The bs-past-capacity step, when it expects that error: a valid case."""
    doc = _steps("bs-past-capacity-expected", {"req_pool_indices": [2, 2], "prefix_lens": [7, 7],
                                               "extend_seq_lens": [1, 1]}, write_req_capacity=1)
    doc["steps"][1]["expect"] = {"error": {"type": "ValueError", "id": "bs-exceeds-capacity",
                                           "message": "kv-canary: bs=2 exceeds "
                                                      "write_req_capacity=1"}}
    return doc


@pytest.fixture(scope="module")
def bad_dir(tmp_path_factory) -> Path:
    cases = tmp_path_factory.mktemp("bad") / "cases"
    cases.mkdir()
    for name, (content, _) in BAD.items():
        (cases / name).write_text(content if isinstance(content, str) else json.dumps(content))
    (cases / "good.json").write_text(json.dumps(GOOD))
    (cases / "bs-expected.json").write_text(json.dumps(_expected_bs_error()))
    return cases


def test_each_bad_file_is_one_fault_naming_file_and_json_path(bad_dir: Path):
    cases, errors = load_corpus([bad_dir])
    assert sorted(c.id for c in cases) == ["bs-past-capacity-expected", "good-one"]
    by_file = {}
    for error in errors:
        by_file.setdefault(error.path.name, []).append(str(error))
    assert sorted(by_file) == sorted(BAD)
    for name, (_, want) in BAD.items():
        [line] = by_file[name]
        assert line.startswith(f"{bad_dir / name}: {want}"), (line, want)
        assert "harness bug" not in line


def test_a_run_with_them_reports_each_as_load_and_runs_the_rest(bad_dir: Path, tmp_path: Path):
    proc, items = run_pytest(tmp_path, "--cases", str(bad_dir), "--planner", "python")
    assert "Interrupted" not in proc.stdout and "Traceback" not in proc.stdout + proc.stderr
    assert proc.returncode == 1  # the faults fail; nothing else does
    assert items["good-one[python]"].outcome == "passed"
    assert items["bs-past-capacity-expected[python]"].outcome == "passed"
    loads = [item for name, item in items.items() if name.endswith("[load]")]
    assert len(loads) == len(BAD) and all(item.outcome == "failed" for item in loads)
    assert len(items) == len(BAD) + 2  # no planner item for a bad case
    for name, (_, want) in BAD.items():
        [text] = [item.text for item in loads if f"{name}: {want}" in item.text]
        assert len(text.strip().splitlines()) == 1
    assert "conformance summary" in proc.stdout


def test_the_cases_command_lists_the_rest_and_the_faults(bad_dir: Path):
    proc = cli("--cases", str(bad_dir), "cases")
    assert "Traceback" not in proc.stdout + proc.stderr
    out = proc.stdout + proc.stderr
    assert "good-one" in out and "bs-past-capacity-expected" in out
    for _, want in BAD.values():
        assert want in out


def _only_fault(tmp_path: Path, change) -> tuple[str, str]:
    """(JSON path, message) of the one load fault of :data:`GOOD` after ``change``."""
    doc = copy.deepcopy(GOOD)
    change(doc)
    (tmp_path / "c.json").write_text(json.dumps(doc))
    cases, errors = load_corpus([tmp_path])
    assert cases == []
    [error] = errors
    return error.json_path, error.message


@pytest.mark.parametrize(("change", "path", "message"), [
    ({"tags": ["hazard\n"]}, "$.tags[0]", "unknown tag 'hazard\\n' (did you mean 'hazard'?): the "
                                          "tags are declared in "
                                          "cases/offsets-planner/schema.json ($defs/tag): "
                                          "spec-example, "),
    ({"tags": ["hazrd"]}, "$.tags[0]", "unknown tag 'hazrd' (did you mean 'hazard'?): "),
    ({"tags": ["qqqqqqqq"]}, "$.tags[0]", "unknown tag 'qqqqqqqq': the tags are declared in "),
    ({"id": "good-one\n"}, "$.id",
     "id 'good-one\\n' does not match '^[a-z0-9][a-z0-9._-]*$' in full"),
    ({"subject": "attention"}, "$.subject", "'attention' is not one of ['offsets-planner']"),
])
def test_tags_ids_and_subjects_are_refused_unless_declared(tmp_path: Path, change, path, message):
    (tmp_path / "c.json").write_text(json.dumps(GOOD | change))
    cases, errors = load_corpus([tmp_path])
    assert cases == []
    [error] = errors
    assert (error.json_path, error.message[:len(message)]) == (path, message)


def test_the_subject_defaults_and_a_group_names_it_for_its_cases(tmp_path: Path):
    group = {"group": "g", "subject": "offsets-planner",
             "cases": [GOOD | {"id": "in-group"}]}
    (tmp_path / "g.json").write_text(json.dumps(group))
    (tmp_path / "c.json").write_text(json.dumps(GOOD))
    cases, errors = load_corpus([tmp_path])
    assert errors == []
    assert [(c.id, c.subject) for c in cases] == [("good-one", "offsets-planner"),
                                                  ("in-group", "offsets-planner")]


def test_every_declared_tag_has_a_meaning_and_the_corpus_uses_only_declared_tags():
    from conformance.corpus.case_schema import known_tags
    tags = known_tags()
    assert "hazard" in tags and "isolation" in tags["hazard"]
    assert all(len(meaning) > 10 for meaning in tags.values())
    cases, errors = load_corpus()
    assert errors == [] and {t for c in cases for t in c.tags} <= set(tags)


@pytest.mark.parametrize(("text", "fault"), [
    ("1e9999223372036854775808", "at $: the case must be a JSON object, got a number too large "
                                 "to read"),
    ('{"id": NaN}', "at $: unreadable number: NaN is not a JSON number"),
    ('{"id": -Infinity}', "at $: unreadable number: -Infinity is not a JSON number"),
    ("[" * 5000 + "]" * 5000, "at $: JSON nested too deeply to read (the limit is 32 levels)"),
    (json.dumps(_good("float-len", inputs__prefix_lens={"fill": 7, "len": 1.0})),
     'at $.inputs.prefix_lens.len: "len" must be an integer, got the number 1.0'),
])
def test_numbers_json_cannot_hold_and_deep_text_are_one_fault(tmp_path: Path, text, fault):
    """Found by tests/test_corpus_mutations.py: a number past Decimal's exponent range used to
    raise decimal.InvalidOperation out of the loader; a float where an integer belongs (1.0 passes
    jsonschema's integer check as a float) is refused by the schema."""
    (tmp_path / "c.json").write_text(text)
    cases, errors = load_corpus([tmp_path])
    assert cases == [] and [str(e) for e in errors] == [f"{tmp_path / 'c.json'}: {fault}"]


@pytest.mark.parametrize(("change", "path", "message"), [
    (lambda doc: doc["inputs"].update(prefix_lens="10,2"), "$.inputs.prefix_lens",
     '"prefix_lens" must be a JSON array of integers (or an object with "fill", "arange", "cycle", '
     '"random" or "concat"), got the string "10,2"'),
    (lambda doc: doc["inputs"].update(prefix_lens=[7, "2"]), "$.inputs.prefix_lens[1]",
     'item 1 of "prefix_lens" must be an integer, got the string "2"'),
    (lambda doc: doc["inputs"].update(extend_seq_lens=1), "$.inputs.extend_seq_lens",
     '"extend_seq_lens" must be a JSON array of integers (or an object with "fill", "arange", '
     '"cycle", "random" or "concat"), got the number 1'),
    (lambda doc: doc["inputs"].update(lut="identity"), "$.inputs.lut",
     '"lut" must be null (or an object with "generator"), got the string "identity"'),
    (lambda doc: doc["inputs"].update(swa_window_size="4" * 50), "$.inputs.swa_window_size",
     '"swa_window_size" must be an integer, got a string of 50 characters starting "'
     + "4" * 40 + '..."'),
    (lambda doc: doc["expect"].update(out_verify_num_valid=None), "$.expect.out_verify_num_valid",
     '"out_verify_num_valid" must be an integer, got null'),
    (lambda doc: doc.update(tags="hazard"), "$.tags",
     '"tags" must be a JSON array, got the string "hazard"'),
    (lambda doc: doc["inputs"].update(req_to_token={"generator": "linear", "max_reqs": 4,
                                                    "max_seq_len": 16, "set": [[0, 1, "a"]]}),
     "$.inputs.req_to_token.set[0][2]", 'item [0][2] of "set" must be an integer, got the string '
                                        '"a"'),
])
def test_a_value_of_the_wrong_type_names_the_field_what_it_must_be_and_what_it_is(
        tmp_path: Path, change, path, message):
    """A value of the wrong JSON type is said in the case author's terms (the field, what it must
    be, what the file holds), not as jsonschema's "'10,2' is not of type 'array'"."""
    assert _only_fault(tmp_path, change) == (path, message)


@pytest.mark.parametrize(("change", "path", "message"), [
    (lambda doc: doc.update(expected=doc.pop("expect")), "$",
     "Additional properties are not allowed ('expected' was unexpected); the keys allowed here: "
     "id, description, tags, subject, source, golden_check, entry, inputs, overrides, derived, "
     "allocate, expect, steps, xfail, pins, needs_review ('expected': did you mean 'expect'?)"),
    (lambda doc: doc["inputs"].update(lut={"generator": "identity", "length": 8}), "$.inputs.lut",
     "Additional properties are not allowed ('length' was unexpected); the keys allowed here: "
     "generator, len, shift, seed, prng, values, set ('length': did you mean 'len'?)"),
    (lambda doc: doc.update(zzz=1), "$",
     "Additional properties are not allowed ('zzz' was unexpected); the keys allowed here: "
     "id, description, tags, subject, source, golden_check, entry, inputs, overrides, derived, "
     "allocate, expect, steps, xfail, pins, needs_review"),
    (lambda doc: doc.update(steps=[{"inputs": doc.pop("inputs"), "expect": doc.pop("expect")}]),
     "$.steps[0].inputs",
     "Additional properties are not allowed ('req_to_token' was unexpected); the keys allowed "
     "here: req_pool_indices, prefix_lens, extend_seq_lens, swa_window_size, verify_capacity, "
     "req_to_token_set, lut_set ('req_to_token': did you mean 'req_to_token_set'?); "
     "'req_to_token' goes in the case's own \"inputs\" (or a group's \"defaults\"), which every "
     "step shares: a step's \"inputs\" hold only what changes"),
])
def test_an_unknown_key_names_the_keys_allowed_and_the_one_meant(tmp_path: Path, change, path,
                                                                 message):
    """A misspelt key (``expected`` for ``expect``, ``length`` for a LUT's ``len``) is refused
    with the keys the schema allows at that place, and the closest one when there is one; a key
    of the case's own inputs given in a step's (the table) says where it goes."""
    assert _only_fault(tmp_path, change) == (path, message)


@pytest.mark.parametrize(("change", "path", "message"), [
    (lambda doc: doc["expect"].update(
        out_write_seed_slot_indice=doc["expect"].pop("out_write_seed_slot_indices")), "$.expect",
     "'out_write_seed_slot_indices' is a required property ('out_write_seed_slot_indice' is "
     "given: did you mean 'out_write_seed_slot_indices'?)"),
    (lambda doc: doc.update(descripton=doc.pop("description")), "$",
     "'description' is a required property ('descripton' is given: did you mean "
     "'description'?)"),
    (lambda doc: doc["expect"].pop("out_write_offsets"), "$.expect",
     "'out_write_offsets' is a required property"),
    (lambda doc: doc["expect"].update(zzz=doc["expect"].pop("out_write_offsets")), "$.expect",
     "'out_write_offsets' is a required property"),
])
def test_a_misspelt_required_key_names_the_key_meant(tmp_path: Path, change, path, message):
    """A required key misspelt (``out_write_seed_slot_indice``) is reported by jsonschema as the
    missing one; the message also names the misspelt key given in its place, and says nothing
    more where no key given is close to the missing one."""
    assert _only_fault(tmp_path, change) == (path, message)
