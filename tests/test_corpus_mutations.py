"""Property test: mutate REAL corpus files (delete, retype, duplicate, nest, enlarge or truncate a
value at any JSON path, or cut, pad or corrupt the text) and load them: the loader yields cases and
``[load]`` faults only, never an exception, and never a fault it calls its own bug.

Examples per run come from the Hypothesis profile (tests/conftest.py): ``ci`` by default,
``pytest tests/test_corpus_mutations.py --hypothesis-profile=deep`` for 10,000.
"""

from __future__ import annotations

import copy
import json

import pytest
from hypothesis import event, given
from hypothesis import strategies as st

from impls.offsets_planner.harness.hazards import HAZARD_TAG, ROWS
from conformance.corpus.case_file import CaseFileError
from conformance.corpus.case_model import Case
from conformance.corpus.loader import HARNESS_BUG, case_files, load_corpus
from conformance.corpus.corpus_subject import CASES_DIR as DEFAULT_CASES_DIR

CORPUS = [(path.name, json.loads(path.read_text())) for path in case_files(DEFAULT_CASES_DIR)]
OTHER_VALUES = [None, True, False, 0, -1, 1.5, "", "x", "hazard\n", [], {}, [1, 2], {"len": 3},
                {"concat": []}, {"fill": 1, "len": 2}, 1 << 31, 1 << 63, -(1 << 63) - 1, 1 << 64,
                10 ** 4000]
KEYS = ["id", "tags", "inputs", "expect", "steps", "overrides", "lut", "req_to_token", "set",
        "len", "concat", "random", "error", "defaults", "cases", "entry", "derived", "allocate",
        "subject", "req_to_token_set", "lut_set", "write_req_capacity", "swa_window_size"]


def _paths(node) -> list[tuple]:
    """Every path into ``node`` (tuples of keys and indices), the root included; iterative."""
    out, stack = [], [((), node)]
    while stack:
        here, value = stack.pop()
        out.append(here)
        if isinstance(value, dict):
            stack.extend((here + (k,), v) for k, v in value.items())
        elif isinstance(value, list):
            stack.extend((here + (i,), v) for i, v in enumerate(value))
    return out


def _enlarge(draw, value):
    if isinstance(value, bool) or value is None:
        return draw(st.sampled_from([1 << 40, [value] * 50]))
    if isinstance(value, int):
        return draw(st.sampled_from([value * 2, value * 10, value + 1, 1 << 31, 1 << 32,
                                     (1 << 63) - 1, 1 << 63, -(1 << 63), 10 ** 30]))
    if isinstance(value, (str, list)):  # at most ~10^5 elements: the test's memory stays small
        return value * min(draw(st.sampled_from([2, 3, 40])), max(1, 100_000 // max(len(value), 1)))
    if isinstance(value, dict):
        return value | {f"{k}-copy": v for k, v in value.items()}
    return value * 1e300  # a float


def _truncate(draw, value):
    if isinstance(value, list):
        return value[: draw(st.integers(0, max(len(value) - 1, 0)))]
    if isinstance(value, str):
        return value[: draw(st.integers(0, max(len(value) - 1, 0)))]
    if isinstance(value, dict):
        keys = list(value)
        return {k: value[k] for k in keys[: draw(st.integers(0, max(len(keys) - 1, 0)))]}
    if isinstance(value, int) and not isinstance(value, bool):
        return draw(st.sampled_from([0, -value, value // 2]))
    return value


def _mutate(draw, doc):
    """One mutation at one path of ``doc``; returns the new document."""
    path = draw(st.sampled_from(_paths(doc)))
    op = draw(st.sampled_from(["delete", "retype", "duplicate", "nest", "enlarge", "truncate"]))
    if not path:
        parent, key, value = None, None, doc
    else:
        parent = doc
        for step in path[:-1]:
            parent = parent[step]
        key, value = path[-1], parent[path[-1]]
    if op == "delete" and parent is not None:
        del parent[key]
        return doc
    if op == "duplicate" and parent is not None:
        if isinstance(parent, list):
            parent.insert(key, copy.deepcopy(value))
        else:
            parent[draw(st.sampled_from(KEYS))] = copy.deepcopy(value)
        return doc
    if op == "nest":
        depth = draw(st.sampled_from([1, 2, 20, 40, 70]))  # deeper: the "deep" text mutation
        wrap = draw(st.sampled_from(["list", "concat"]))
        for _ in range(depth):
            value = [value] if wrap == "list" else {"concat": [value]}
    elif op == "enlarge":
        value = _enlarge(draw, value)
    elif op == "truncate":
        value = _truncate(draw, value)
    else:  # retype (and delete / duplicate of the root)
        value = copy.deepcopy(draw(st.sampled_from(OTHER_VALUES)))
    if parent is None:
        return value
    parent[key] = value
    return doc


@st.composite
def mutated_files(draw) -> tuple[str, bytes]:
    """(file name, content): a real corpus file (a group cut to one of its cases), mutated."""
    name, doc = draw(st.sampled_from(CORPUS))
    doc = copy.deepcopy(doc)
    if isinstance(doc, dict) and isinstance(doc.get("cases"), list) and doc["cases"]:
        i = draw(st.integers(0, len(doc["cases"]) - 1))
        doc["cases"] = doc["cases"][i:i + 1]
    for _ in range(draw(st.integers(1, 3))):
        doc = _mutate(draw, doc)
    data = json.dumps(doc).encode()
    text_op = draw(st.sampled_from(["none"] * 6 + ["cut", "deep", "digits", "bytes"]))
    if text_op == "cut":
        data = data[: draw(st.integers(0, len(data)))]
    elif text_op == "deep":
        depth = draw(st.sampled_from([100, 1000, 5000]))
        data = b"[" * depth + data + b"]" * depth
    elif text_op == "digits":
        data = data.replace(b"1", b"1" + b"0" * 4400, 1)
    elif text_op == "bytes":
        at = draw(st.integers(0, len(data)))
        data = data[:at] + draw(st.sampled_from([b"\xff", b"\xc3", b"\x00", b"NaN", b"1e999"])) \
            + data[at:]
    return name, data


@pytest.mark.filterwarnings("ignore::impls.offsets_planner.harness.hazards.HazardTagWarning")
@pytest.mark.filterwarnings("ignore::impls.offsets_planner.harness.tag_rules.TagWarning")
@given(mutated_files())
def test_loading_a_mutated_corpus_file_yields_cases_and_faults_only(tmp_path_factory, sample):
    name, data = sample
    directory = tmp_path_factory.mktemp("mutated")
    path = directory / name
    path.write_bytes(data)
    cases, errors = load_corpus([directory])
    event(f"{len(cases)} case(s), {len(errors)} fault(s)")
    assert all(isinstance(c, Case) for c in cases)
    assert all(isinstance(e, CaseFileError) for e in errors)
    for error in errors:
        text = str(error)
        assert text.startswith(f"{path}: at "), text
        assert HARNESS_BUG not in error.message, text
        assert "\n" not in text and len(text) < len(str(path)) + 1000, text
        assert error.json_path.isprintable() and len(error.json_path) < 500, text
    for case in cases:
        assert set(case.out_of_contract) <= set(ROWS)
        assert not case.out_of_contract or HAZARD_TAG in case.tags
        assert case.path == path
