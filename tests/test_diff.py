"""Readable diffs of output buffers (conformance/engine/diff.py)."""

from __future__ import annotations


from conformance.engine.diff import differing_indices, field_diff


# ---------------------------------------------------------------------------------------------
# The diff


def test_field_diff_equal_and_basic():
    assert field_diff("f", [1, 2], [1, 2]) is None
    assert differing_indices([1, 2, 3], [1, 5]) == [1, 2]
    text = field_diff("out_write_offsets", [0, 1, 2, 3, 4, 5, 6, 7, 8], [0, 1, 2, 3, 9, 5, 6, 7, 9])
    lines = text.splitlines()
    assert lines[0] == "out_write_offsets: 2 element(s) differ, first at index 4"
    assert [line.split() for line in lines[1:]] == [
        ["index", "1", "2", "3", "4", "5", "6", "7"],
        ["expected", "1", "2", "3", "[4]", "5", "6", "7"],
        ["got", "1", "2", "3", "[9]", "5", "6", "7"],
    ]
    short = field_diff("f", [1, 2, 3], [1, 2]).splitlines()
    assert short[0] == "f: 1 element(s) differ, first at index 2"
    assert short[-1].split() == ["got", "1", "2", "[-]"]


def test_field_diff_outside_the_tensor_and_poison():
    poison = [90, 91, 92, 93, 94, 95]
    before = field_diff("s", poison[:2] + [1, 2] + poison[4:], [80] + poison[1:2] + [1, 2]
                        + poison[4:], offset=2, length=2, poison=poison)
    assert before.splitlines()[:2] == [
        "s: 1 element(s) differ, first at index -2 (outside the tensor: 2 before its start)",
        "  expected is the poison there: the planner must not write this element"]
    past = field_diff("s", poison[:2] + [1, 2] + poison[4:], poison[:2] + [1, 2, 94, 7],
                      offset=2, length=2, poison=poison)
    assert past.splitlines()[0] == \
        "s: 1 element(s) differ, first at index 3 (outside the tensor: 2 past its end, length 2)"
    never = field_diff("s", poison[:2] + [1, 2] + poison[4:], poison, offset=2, length=2,
                       poison=poison)
    assert never.splitlines()[:2] == [
        "s: 2 element(s) differ, first at index 0",
        "  got is still the poison there: the planner never wrote this element"]
    wrong = field_diff("s", poison[:2] + [1, 2] + poison[4:], poison[:2] + [1, 3] + poison[4:],
                       offset=2, length=2, poison=poison)
    assert wrong.splitlines()[0].endswith("first at index 1")
    assert "poison there" not in wrong  # neither side is the poison at the first difference
    # Cells that hold the poison read "poison", not the number.
    assert [line.split() for line in wrong.splitlines()[1:]] == [
        ["index", "-2", "-1", "0", "1", "2", "3"],
        ["expected", "poison", "poison", "1", "[2]", "poison", "poison"],
        ["got", "poison", "poison", "1", "[3]", "poison", "poison"]]


def test_field_diff_shows_the_first_element_of_each_other_rule():
    """A project-rule element before a contract one: the contract's first element gets a table of
    its own under its heading, so the rule a case is judged on is in view (spec section 8)."""
    expected = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15]
    got = [7, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 99, 13, 14, 15]
    text = field_diff("out_write_seed_slot_indices", expected, got,
                      also={"first under project rule lut-clamp": 0, "first under contract": 12})
    lines = text.splitlines()
    assert lines[0] == "out_write_seed_slot_indices: 2 element(s) differ, first at index 0"
    assert [line.split() for line in lines[1:4]] == [
        ["index", "0", "1", "2", "3"], ["expected", "[0]", "1", "2", "3"],
        ["got", "[7]", "1", "2", "3"]]
    assert lines[4] == "  first under contract: index 12"
    assert [line.split() for line in lines[5:]] == [
        ["index", "9", "10", "11", "12", "13", "14", "15"],
        ["expected", "9", "10", "11", "[12]", "13", "14", "15"],
        ["got", "9", "10", "11", "[99]", "13", "14", "15"]]
    # the first element's own rule is not shown twice; no other rule, no other table
    assert field_diff("f", [1, 2], [1, 3], also={"first under contract": 1}).count("index") == 2
