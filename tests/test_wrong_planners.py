"""The harness against deliberately wrong planners.

Each wrong planner of :mod:`tests.planted.wrong_planners` runs through the real harness
(:func:`conformance.engine.runner.run_case` on cases loaded by :func:`conformance.corpus.loader.load_corpus`) and
must fail with a :class:`ConformanceFailure` whose text names the right field, index and reason; the
pure-Python planner must pass the very same case. The cases are the repository's spec §7 examples
plus a few small cases written here into a temporary directory (a buffer with room past bs, a
negative slot behind a LUT, one-fault and two-fault error cases).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import pytest
import torch

from conformance.corpus.loader import load_corpus
from conformance.paths import REPO_ROOT
from conformance.engine.runner import ConformanceFailure, Target, run_case
from conformance.corpus.corpus_subject import CASES_DIR as DEFAULT_CASES_DIR
from conformance.corpus.corpus_subject import NAME as CORPUS_NAME
from conformance.plugin.summary import parse as parse_summary
from impls.offsets_planner.contract import REQUEST_INPUT_NAMES
from impls.offsets_planner.python_planner import launch as python_launch
from tests.planted import wrong_planners as wp


CPU = torch.device("cpu")
SPEC7 = DEFAULT_CASES_DIR / "spec"

_LINEAR = {"generator": "linear", "max_reqs": 4, "max_seq_len": 16}
_PREFILL_AND_DECODES = {
    "out_verify_offsets_scratch": [0, 0, 4, 14], "out_write_offsets": [0, 8, 9, 10],
    "out_write_seed_slot_indices": [-1, 35, 57],
    "out_verify_num_valid": 14, "out_verify_enable": 1, "out_write_num_valid_reqs": 3,
}
# Two requests, not one: a one-element tensor is contiguous whatever its stride, so a "strided"
# override needs at least two elements to make a non-contiguous tensor.
_TWO_REQUESTS = {"req_to_token": _LINEAR, "lut": None, "swa_window_size": 0,
                 "verify_capacity": 1000, "req_pool_indices": [1, 2], "prefix_lens": [3, 5],
                 "extend_seq_lens": [1, 1]}
LOCAL_CASES = {
    "roomy.json": {
        "id": "tw-room-past-bs",
        "description": "spec §7's prefill and two decodes, with buffers for 8 requests: room past bs.",
        "tags": [], "source": {"kind": "spec", "ref": "docs/spec/offsets-planner.md §7"},
        "golden_check": "hand: spec §7 values; the tail past bs must keep the poison (§5)",
        "inputs": {"req_to_token": _LINEAR, "lut": None, "swa_window_size": 0,
                   "verify_capacity": 1000, "write_req_capacity": 8,
                   "req_pool_indices": [1, 2, 3], "prefix_lens": [0, 4, 10],
                   "extend_seq_lens": [8, 1, 1]},
        "expect": _PREFILL_AND_DECODES,
    },
    "lut-negative.json": {
        "id": "tw-lut-negative-slot",
        "description": "table[1, 2] = -1 behind a shift LUT: the second seed passes through as -1.",
        "tags": ["swa", "lut"], "source": {"kind": "spec", "ref": "docs/spec/offsets-planner.md §5"},
        "golden_check": "hand: seed 0 = table[2, 4] = 36 -> 136; seed 1 = -1 untranslated (§5)",
        "inputs": {"req_to_token": {**_LINEAR, "set": [[1, 2, -1]]},
                   "lut": {"generator": "shift", "len": 65, "shift": 100},
                   "swa_window_size": 128, "verify_capacity": 1000,
                   "req_pool_indices": [2, 1], "prefix_lens": [5, 3], "extend_seq_lens": [1, 1]},
        "expect": {"out_verify_offsets_scratch": [0, 5, 8], "out_write_offsets": [0, 1, 2],
                   "out_write_seed_slot_indices": [136, -1], "out_verify_num_valid": 8,
                   "out_verify_enable": 1, "out_write_num_valid_reqs": 2},
    },
    "errors.json": {
        "group": "tw-errors",
        "defaults": {"tags": ["documented-error"],
                     "source": {"kind": "spec", "ref": "docs/spec/offsets-planner.md §4"},
                     "golden_check": "hand: spec §4 text", "inputs": _TWO_REQUESTS},
        "cases": [
            {"id": "tw-dtype-prefix-lens", "description": "int32 prefix_lens.",
             "overrides": [{"tensor": "prefix_lens", "dtype": "int32"}],
             "expect": {"error": {"type": "ValueError", "id": "dtype", "message":
                                  "kv-canary: prefix_lens must have dtype torch.int64, got torch.int32"}}},
            {"id": "tw-contiguous-before-dtype",
             "description": "int32 req_pool_indices and a strided prefix_lens: contiguity (item 1) first.",
             "overrides": [{"tensor": "req_pool_indices", "dtype": "int32"},
                           {"tensor": "prefix_lens", "layout": "strided"}],
             "expect": {"error": {"type": "ValueError", "id": "contiguous",
                                  "message": "kv-canary: prefix_lens must be contiguous"}}},
        ],
    },
}


@pytest.fixture(scope="module")
def cases(tmp_path_factory) -> dict:
    """Every case by id: the repository's spec §7 group plus :data:`LOCAL_CASES`."""
    directory = tmp_path_factory.mktemp("wrong-planner-cases")
    for name, doc in LOCAL_CASES.items():
        (directory / name).write_text(json.dumps(doc, indent=1))
    loaded, errors = load_corpus([SPEC7, directory])
    assert errors == []
    by_id = {case.id: case for case in loaded}
    assert len(by_id) == 10 + 4
    return by_id


def _target(name: str) -> Target:
    return Target(f"tests.planted.wrong_planners:{name}", getattr(wp, name), CPU)


def _failure(case, name: str) -> str:
    """Run ``case`` on wrong planner ``name``; return the failure text (the run must fail)."""
    with pytest.raises(ConformanceFailure) as excinfo:
        run_case(case, _target(name))
    return str(excinfo.value)


def diff_table(text: str, after: int = 0) -> dict[int, tuple[str, str]]:
    """The first index / expected / got table of a failure at or after ``after``:
    {index: (expected cell, got cell)}."""
    lines = text[after:].splitlines()
    start = next(k for k, line in enumerate(lines) if line.split()[:1] == ["index"])
    rows = {line.split()[0]: line.split()[1:] for line in lines[start:start + 3]}
    assert list(rows) == ["index", "expected", "got"], text
    assert len(rows["index"]) == len(rows["expected"]) == len(rows["got"]), text
    return {int(i): (e, g) for i, e, g in zip(rows["index"], rows["expected"], rows["got"])}


# (wrong planner, case id, what the failure must show, in order: substrings, and dicts of
# {index: (expected cell, got cell)} that the next diff table must include)
CAUGHT = [
    ("off_by_one_scan", "spec7-prefill-and-decodes", [
        "run 1 of 2 (fresh poison 'a')",
        "out_write_offsets: 3 element(s) differ, first at index 0",
        {0: ("[0]", "[8]"), 1: ("[8]", "[9]"), 2: ("[9]", "[10]"), 3: ("10", "10")},
    ]),
    ("writes_offsets_past_bs", "tw-room-past-bs", [
        "out_write_offsets: 1 element(s) differ, first at index 4",
        "expected is the poison there: the planner must not write this element",
        {3: ("10", "10"), 4: ("[poison]", "[10]")},
        "decided by: contract\n      spec §5: nothing else is written; an element past the plan "
        "keeps what the caller left there (upstream's wrapper zeroes write_offsets before the "
        "launch; the planner does not)",
    ]),
    ("writes_seed_past_bs", "tw-room-past-bs", [
        "out_write_seed_slot_indices: 1 element(s) differ, first at index 3",
        "expected is the poison there: the planner must not write this element",
        {2: ("57", "57"), 3: ("[poison]", "[-1]")},
        "decided by: contract\n      spec §5: nothing else is written; an element past the plan "
        "keeps what the caller left there\n",
    ]),
    ("zeroes_write_offsets_tail", "tw-room-past-bs", [
        "out_write_offsets: 5 element(s) differ, first at index 4",
        "expected is the poison there: the planner must not write this element",
        {3: ("10", "10"), 4: ("[poison]", "[0]"),
         5: ("[poison]", "[0]")},
    ]),
    ("writes_outside_tensor", "spec7-prefill-and-decodes", [
        "out_write_seed_slot_indices: 1 element(s) differ, first at index 3 "
        "(outside the tensor: 1 past its end, length 3)",
        "expected is the poison there: the planner must not write this element",
        {2: ("57", "57"), 3: ("[poison]", "[-1]")},
        "decided by: contract\n      spec §6: no implementation may ever read or write outside "
        "a tensor",
    ]),
    ("reads_past_bs", "spec7-prefill-and-decodes", [
        "out_verify_offsets_scratch: 1 element(s) differ, first at index 3",
        {2: ("4", "4"), 3: ("[14]", f"[{14 + (1 << 40)}]")},
        "decided by: contract\n      spec §5: out_verify_offsets_scratch[bs] = total_verify\n",
    ]),
    ("modifies_input", "spec7-prefill-and-decodes", [
        "modified its input (inputs are read-only, spec §5)",
        "prefix_lens: 3 element(s) differ, first at index 0",
        {0: ("[0]", "[8]"), 1: ("[4]", "[5]"), 2: ("[10]", "[11]"),
         3: (str(1 << 40), str(1 << 40))},  # the garbage tail is shown, unchanged
    ]),
    ("never_writes_scalar", "spec7-no-prefix", [
        "out_write_num_valid_reqs: 1 element(s) differ, first at index 0",
        "got is still the poison there: the planner never wrote this element",
        {0: ("[1]", "[poison]")},
        "decided by: contract\n      spec §5: out_write_num_valid_reqs[0] = bs (padding rows "
        "included)",
    ]),
    ("depends_on_previous_contents", "spec7-prefill-and-decodes", [
        "run 2 of 2 (fresh poison 'b'): the first run matched, so the output depends on what the "
        "buffers held before, or is nondeterministic",
        "out_verify_num_valid: 1 element(s) differ, first at index 0",
        "got is still the poison there",  # min(14, negative poison 'b') kept the old value
        {0: ("[14]", "[poison]")},
        "decided by: contract\n      spec §5: out_verify_num_valid[0] = min(total_verify, "
        "verify_capacity), stored as its int32 wrap",
    ]),
    ("reads_lut_at_minus_one", "tw-lut-negative-slot", [
        "out_write_seed_slot_indices: 1 element(s) differ, first at index 1",
        {0: ("136", "136"), 1: ("[-1]", "[164]")},
        "decided by: contract\n      spec §5: out_write_seed_slot_indices[r] = seed[r]: -1 unless "
        "request r is active, has a prefix and writes; else req_to_token[req_pool_indices[r], "
        "prefix_lens[r] - 1], through the LUT when there is one",
    ]),
    ("wrong_error_message", "tw-dtype-prefix-lens", [
        "wrong error",
        "expected ValueError [dtype] 'kv-canary: prefix_lens must have dtype torch.int64, got "
        "torch.int32'",
        "got ValueError [dtype] 'kv-canary: prefix_lens must have dtype int64, got int32'",
    ]),
    ("wrong_error_type", "tw-dtype-prefix-lens", [
        "wrong error",
        "got TypeError [dtype] 'kv-canary: prefix_lens must have dtype torch.int64, got "
        "torch.int32'",
    ]),
    ("wrong_check_order", "tw-contiguous-before-dtype", [
        "wrong error",
        "expected ValueError [contiguous] 'kv-canary: prefix_lens must be contiguous'",
        "got ValueError [dtype] 'kv-canary: req_pool_indices must have dtype torch.int64, got "
        "torch.int32'",
        "decided by: contract\n      spec §4 item 1: the documented error 'contiguous', raised "
        "as its exact message by the first check that fails, in spec §4's order",
    ]),
    ("skips_validation", "tw-dtype-prefix-lens", [
        "expected ValueError [dtype] 'kv-canary: prefix_lens must have dtype torch.int64, got "
        "torch.int32'",
        "but the call returned normally",
        "decided by: contract (a step that must raise and returned, spec §8)\n      spec §4 item "
        "2: the documented error 'dtype'",
        # what it wrote follows from the missing error: one line, not six diff tables
        "\n    and wrote 3 element(s) of out_verify_offsets_scratch, 3 element(s) of "
        "out_write_offsets, 2 element(s) of out_write_seed_slot_indices, 1 element(s) of "
        "out_verify_num_valid, 1 element(s) of out_verify_enable, 1 element(s) of "
        "out_write_num_valid_reqs\n      spec §4: the checks run before the launch, so a step "
        "that must raise writes nothing\n  and 21 more difference(s) in 2 later call(s)",
    ]),
    ("raises_lookalike_value_error", "tw-dtype-prefix-lens", [
        "wrong error",
        "got ValueError [dtype] 'kv-canary: prefix_lens must have dtype torch.int64, got "
        "torch.int32'",
        "(ValueError here is a class of that name, not a subclass of the built-in ValueError)",
    ]),
    ("returns_a_value", "spec7-prefill-and-decodes", [
        "run 1 of 2 (fresh poison 'a')",
        "returned 3; the launcher returns None (spec section 3)",
    ]),
]


def test_every_wrong_planner_is_exercised():
    """Each planner of tests.planted.wrong_planners has a row in CAUGHT, and a docstring naming its bug."""
    assert sorted(name for name, _, _ in CAUGHT) == sorted(wp.__all__)
    for name in wp.__all__:
        assert "Bug:" in getattr(wp, name).__doc__, name


@pytest.mark.parametrize(("name", "case_id", "needles"), CAUGHT, ids=[row[0] for row in CAUGHT])
def test_wrong_planner_is_caught(cases, name, case_id, needles):
    case = cases[case_id]
    run_case(case, Target("python", python_launch, CPU))  # the same case passes on the reference
    text = _failure(case, name)
    lines = text.splitlines()
    # The report's frame: case id, planner and file; the description; the rerun command last.
    assert lines[0].startswith(f"{case_id}[tests.planted.wrong_planners:{name}]  (")
    assert case.path.name in lines[0]
    assert lines[1] == f"  {case.description}"
    outside = not case.path.resolve().is_relative_to(DEFAULT_CASES_DIR)
    cases_arg = f"--cases {case.path.parent} " if outside else ""
    assert lines[-1].startswith("  rerun: ") and lines[-1].endswith(  # after the environment
        f"pytest conformance/ --planner tests.planted.wrong_planners:{name} {cases_arg}--case "
        f"{case_id} --results reports/out/rerun-{case_id}.json")
    position = 0
    for needle in needles:  # every needle present, in order
        if isinstance(needle, dict):
            table = diff_table(text, position)
            assert {i: table.get(i) for i in needle} == needle, text
            continue
        found = text.find(needle, position)
        assert found >= 0, f"{needle!r} not found after offset {position} in:\n{text}"
        position = found + len(needle)


def test_group_case_location_names_file_and_json_path(cases):
    text = _failure(cases["tw-contiguous-before-dtype"], "wrong_check_order")
    assert re.search(r"errors\.json \$\.cases\[1\]\)$", text.splitlines()[0]), text


def test_off_by_one_report_in_full(cases):
    """The whole report of one failure, as a reader sees it (runs of spaces squeezed): under the
    table, each per-request input at the table's indices (``-`` in the guard zone and at bs)."""
    case = cases["spec7-prefill-and-decodes"]
    text = _failure(case, "off_by_one_scan")
    squeezed = [re.sub(" +", " ", line) for line in text.splitlines()]
    squeezed[-1] = re.sub(r"^ rerun: ([A-Z_]+=\S+ )*", " rerun: ", squeezed[-1])  # the environment
    inputs = [f" {name} - - - " + " ".join(map(str, case.steps[0].inputs[name])) + " -"
              for name in REQUEST_INPUT_NAMES]  # indices -3..3 of a bs-3 step
    assert inputs[1] == " prefix_lens - - - 0 4 10 -"
    assert squeezed == [
        "spec7-prefill-and-decodes[tests.planted.wrong_planners:off_by_one_scan] "
        "(cases/offsets-planner/spec/section7-examples.json $.cases[2])",
        " A prefill and two decodes: write offsets 0, 8, 9, 10; verify total 14.",
        " run 1 of 2 (fresh poison 'a')",
        " out_write_offsets: 3 element(s) differ, first at index 0",
        " index -3 -2 -1 0 1 2 3",
        " expected poison poison poison [0] [8] [9] 10",
        " got poison poison poison [8] [9] [10] 10",
        *inputs,
        " decided by: contract (3)",
        " spec §5: out_write_offsets[r] = sum of write_len[0..r) for r < bs (an exclusive prefix "
        "sum)",
        " and 6 more difference(s) in 2 later call(s)",  # run b, then the plain run
        " rerun: pytest conformance/ --planner tests.planted.wrong_planners:off_by_one_scan "
        "--case spec7-prefill-and-decodes --results reports/out/rerun-spec7-prefill-and-decodes.json",
    ]


def test_spec7_group_catches_the_plain_bugs(cases):
    """Without any case written for them, the repository's spec §7 examples already catch every
    wrong planner whose bug shows on a plain valid batch, and the reference passes all ten."""
    spec7 = [case for case in cases.values() if case.id.startswith("spec7-")]
    assert len(spec7) == 10
    for case in spec7:
        run_case(case, Target("python", python_launch, CPU))
    for name in ("off_by_one_scan", "writes_outside_tensor", "reads_past_bs", "modifies_input",
                 "never_writes_scalar", "depends_on_previous_contents"):
        caught = []
        for case in spec7:
            try:
                run_case(case, _target(name))
            except ConformanceFailure:
                caught.append(case.id)
        assert caught, f"{name} passes every spec §7 case"


def test_each_difference_names_the_clause_that_decides_it():
    """Under ``decided by:`` the failure quotes the spec's words for each differing element: a
    project rule's section-6 situation, and for the contract the section-5 line of the element
    (here a stale tail from the case's first step, overwritten by its third: section 5's "nothing
    else is written", not only expected/got)."""
    from tests.planted.divergent_planners import reads_past_row

    loaded, errors = load_corpus([DEFAULT_CASES_DIR])
    assert errors == []
    by_id = {case.id: case for case in loaded}
    target = Target("tests.planted.divergent_planners:reads_past_row", reads_past_row, CPU)
    with pytest.raises(ConformanceFailure) as excinfo:
        run_case(by_id["hazard-prefix-past-row"], target)
    assert ("    decided by: project rule past-row\n"
            "      spec §6: prefix_lens[r] - 1 >= max_seq_len (this project's column)\n"
            in str(excinfo.value)), str(excinfo.value)
    text = _failure(by_id["err-steps-dtype-between-valid"], "zeroes_write_offsets_tail")
    assert "step 3 of 3, run 1 of 2 (fresh poison 'a')" in text, text
    assert diff_table(text) == {-1: ("poison", "poison"), 0: ("0", "0"), 1: ("1", "1"),
                                2: ("[3]", "[0]"), 3: ("poison", "poison"),
                                4: ("poison", "poison"), 5: ("poison", "poison")}, text
    assert ("    decided by: contract\n      spec §5: nothing else is written; an element past "
            "the plan keeps what the caller left there (upstream's wrapper zeroes write_offsets "
            "before the launch; the planner does not)\n" in text), text


def test_bugs_that_need_room_are_invisible_without_it(cases):
    """The write-past-bs planners only write inside the tensor; where bs fills it (spec §7's
    buffers are sized to bs) there is nothing to see, which is why tw-room-past-bs exists."""
    case = cases["spec7-prefill-and-decodes"]
    run_case(case, _target("writes_offsets_past_bs"))
    run_case(case, _target("writes_seed_past_bs"))


def test_wrong_planners_are_right_elsewhere(cases):
    """Each bug is narrow: the error planners plan valid batches right, and the valid-input bugs
    raise the right error; so each catch above is for the planted bug, not some other fault."""
    valid = cases["spec7-prefill-and-decodes"]
    for name in ("wrong_error_message", "wrong_error_type", "wrong_check_order",
                 "skips_validation", "reads_lut_at_minus_one", "raises_lookalike_value_error"):
        run_case(valid, _target(name))
    for name in ("off_by_one_scan", "writes_seed_past_bs", "modifies_input",
                 "depends_on_previous_contents", "reads_past_bs", "wrong_error_message",
                 "returns_a_value"):
        run_case(cases["tw-contiguous-before-dtype"], _target(name))
    run_case(cases["tw-lut-negative-slot"], _target("writes_seed_past_bs"))  # bs fills the seeds


def test_multi_step_case_reports_the_step(tmp_path):
    """A batch that shrinks over reused buffers: the tail of step 1 must survive step 2, and a
    failure names the step."""
    doc = {
        "id": "tw-shrink", "description": "bs 3 then bs 1 over the same buffers.",
        "tags": ["steps"], "source": {"kind": "spec", "ref": "docs/spec/offsets-planner.md §5"},
        "golden_check": "hand: §5; step 2 writes [0, 1] of the offsets and [0] of the seeds only",
        "inputs": {"req_to_token": _LINEAR, "lut": None},
        "steps": [
            {"inputs": {"req_pool_indices": [1, 2, 3], "prefix_lens": [0, 4, 10],
                        "extend_seq_lens": [8, 1, 1]}, "expect": _PREFILL_AND_DECODES},
            {"inputs": {"req_pool_indices": [2], "prefix_lens": [7], "extend_seq_lens": [1]},
             "expect": {"out_verify_offsets_scratch": [0, 7], "out_write_offsets": [0, 1],
                        "out_write_seed_slot_indices": [38], "out_verify_num_valid": 7,
                        "out_verify_enable": 1, "out_write_num_valid_reqs": 1}},
        ],
    }
    (tmp_path / "shrink.json").write_text(json.dumps(doc))
    (case,), errors = load_corpus([tmp_path])
    assert errors == []
    run_case(case, Target("python", python_launch, CPU))
    # Zeroing the offsets wipes step 1's stale [2] and [3], which step 2 must leave alone.
    text = _failure(case, "zeroes_write_offsets_tail")
    assert "  step 2 of 2, run 1 of 2 (fresh poison 'a')\n" in text
    assert "out_write_offsets: 2 element(s) differ, first at index 2" in text
    table = diff_table(text)
    assert [table[i] for i in range(5)] == [
        ("0", "0"), ("1", "1"), ("[9]", "[0]"), ("[10]", "[0]"),
        ("poison", "poison")]


# ---------------------------------------------------------------------------------------------
# End to end: pytest in a subprocess, as a user runs it.


def _pytest(*args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1", "COLUMNS": "200"}
    env.pop("PYTEST_ADDOPTS", None)
    env.pop("PYTEST_XDIST_WORKER", None)
    return subprocess.run(
        [sys.executable, "-m", "pytest", "conformance/", "-p", "no:cacheprovider", *args],
        cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=120,
    )


def _summary_row(output: str, planner: str) -> list[str]:
    lines = output.splitlines()
    if planner == "planner":
        return next(ln.split() for ln in lines if ln.startswith("planner "))
    start = lines.index(next(ln for ln in lines if "conformance summary" in ln))
    rows = parse_summary(lines[start + 1:])
    if planner not in rows:
        raise AssertionError(f"no summary row for {planner!r} in:\n{output}")
    return rows[planner]


def test_pytest_end_to_end_catches_off_by_one():
    name = "tests.planted.wrong_planners:off_by_one_scan"
    result = _pytest("--planner", name, "--case", "spec7-prefill-and-decodes")
    out = result.stdout
    assert result.returncode == 1, out + result.stderr
    assert (f"spec7-prefill-and-decodes[{name}]  "
            f"(cases/offsets-planner/spec/section7-examples.json $.cases[2])" in out)
    assert "out_write_offsets: 3 element(s) differ, first at index 0" in out
    assert f"pytest conformance/ --planner {name} --case spec7-prefill-and-decodes " in out
    assert re.search(r"^=+ conformance summary =+$", out, re.M), out
    header = _summary_row(out, "planner")
    assert header == ["planner", "mode", "pass", "fail", "xfail", "xpass", "skip",
                      "error", "oob", "differs", "not-wrapper", "declared", "seconds"]
    summary = out.split("conformance summary")[1].splitlines()[1:]
    summary = summary[:next(i for i, ln in enumerate(summary) if ln.startswith("="))]
    assert max(len(line) for line in summary) <= 120  # the long planner name wraps in its column
    # the corpus subject's table is headed by its name, as each one-call subject's is by its own
    table = next(i for i, ln in enumerate(summary) if ln.startswith("planner "))
    assert summary[table - 1] == f"subject {CORPUS_NAME}:", summary
    row = _summary_row(out, name)
    assert row[1:8] == ["external", "0", "1", "0", "0", "0", "0"]
    assert re.search(r"\b1 failed\b", out.splitlines()[-1]), out.splitlines()[-1]


def test_pytest_end_to_end_bad_case_files(tmp_path):
    """A malformed file (bad JSON), a schema violation and a duplicate id each fail as one item
    naming the file and the JSON path; every good case still runs and passes."""
    good = {**LOCAL_CASES["roomy.json"], "id": "tw-good"}
    (tmp_path / "a-good.json").write_text(json.dumps(good))
    (tmp_path / "b-bad-json.json").write_text('{"id": "tw-broken",\n  "tags": [}\n')
    bad_schema = {**LOCAL_CASES["roomy.json"], "id": "tw-bad-schema"}
    bad_schema["inputs"] = {**bad_schema["inputs"], "prefix_lens": "four"}
    (tmp_path / "c-bad-schema.json").write_text(json.dumps(bad_schema))
    (tmp_path / "d-duplicate.json").write_text(json.dumps(good))
    result = _pytest("--planner", "python", "--cases", str(tmp_path))
    out = result.stdout
    assert result.returncode == 1, out + result.stderr
    assert f"bad case file: {tmp_path / 'b-bad-json.json'}: at line 2 column 12: malformed JSON: " \
           f"Expecting value" in out
    assert f"bad case file: {tmp_path / 'c-bad-schema.json'}: at $.inputs.prefix_lens: " in out
    assert (f"bad case file: {tmp_path / 'd-duplicate.json'}: at $.id: duplicate case id 'tw-good' "
            f"(first in {tmp_path / 'a-good.json'})") in out
    assert _summary_row(out, "python")[1:4] == ["cpu", "1", "0"]
    assert _summary_row(out, "load")[1:4] == ["-", "0", "3"]
    assert re.search(r"\b3 failed, 1 passed\b", out.splitlines()[-1]), out.splitlines()[-1]


def test_repository_corpus_catches_every_wrong_planner():
    """Every deliberately wrong planner fails at least one case of the
    repository's own corpus (cases/), which the reference passes in full."""
    corpus, errors = load_corpus()
    assert errors == []
    launcher_cases = [case for case in corpus if case.entry == "launcher"]
    for case in launcher_cases:
        run_case(case, Target("python", python_launch, CPU))
    missed = []
    for name in wp.__all__:
        for case in launcher_cases:
            try:
                run_case(case, _target(name))
            except ConformanceFailure:
                break
        else:
            missed.append(name)
    assert missed == [], f"the corpus never catches {missed}"
