"""The three entries planners against the spec's worked examples and an independent oracle.

Spec: docs/spec/entries-planner.md sections 5, 6 and 9. Every output starts POISON-filled, so an
element a planner must not write (past the total, or everything when the gate is shut) is checked
to keep its poison. Triton runs in its interpreter and Numba in its simulator here (few, small
cases: both are slow).
"""

from __future__ import annotations

import random

import pytest
import torch

from impls.entries_planner import PLANNERS, get_planner, planner_mode
from tests.entries_oracle import POISON, build, linear_pool, linear_table, outputs

SLOT, TOKEN, POS, PREV = ("out_verify_slot_indices", "out_verify_expected_tokens",
                          "out_verify_expected_positions", "out_verify_prev_slot_indices")


@pytest.fixture(scope="module", params=list(PLANNERS))
def planner(request):
    """The planner's launcher; a compiled one (``gpu`` mode) gets CUDA copies of the CPU tensors
    the tests build, and every tensor is copied back after the launch (outputs to compare, inputs
    to check they were left as they were)."""
    try:
        launch = get_planner(request.param)
    except RuntimeError as exc:
        pytest.skip(str(exc))
    if planner_mode(request.param) != "gpu":
        return launch

    def on_cuda(**kwargs):
        moved = {k: v.cuda() if isinstance(v, torch.Tensor) else v for k, v in kwargs.items()}
        launch(**moved)
        for name, tensor in moved.items():
            if isinstance(tensor, torch.Tensor):
                kwargs[name].copy_(tensor.cpu())
    return on_cuda


def run(planner, kwargs) -> dict[str, list[int]]:
    inputs = {k: v.clone() for k, v in kwargs.items()
              if isinstance(v, torch.Tensor) and not k.startswith("out_")}
    planner(**kwargs)
    for name, before in inputs.items():
        assert torch.equal(kwargs[name], before), f"{name} was modified"
    return outputs(kwargs)


def tail(values, capacity):
    return list(values) + [POISON] * (capacity - len(values))


# Spec section 9, example 1: two live requests around a padding row, no window, no LUT, no pool.
def test_example_padding_row_between_two_requests(planner):
    kwargs, offsets, _ = build([1, 0, 2], [5, 99, 3], capacity=10)
    assert offsets == [0, 5, 5, 8]
    got = run(planner, kwargs)
    assert got[SLOT] == tail([16, 17, 18, 19, 20, 32, 33, 34], 10)
    assert got[POS] == tail([0, 1, 2, 3, 4, 0, 1, 2], 10)
    assert got[PREV] == tail([-1, 16, 17, 18, 19, -1, 32, 33], 10)
    assert got[TOKEN] == tail([-1] * 8, 10)


# Example 2: a sliding window of 2 over a prefix of 5, through the LUT arange(64) + 100.
def test_example_window_and_lut(planner):
    lut = torch.arange(64, dtype=torch.int64) + 100
    kwargs, offsets, _ = build([1], [5], window=2, lut=lut, capacity=2)
    assert offsets == [0, 2]
    got = run(planner, kwargs)
    assert got[POS] == [3, 4]
    assert got[SLOT] == [119, 120]
    assert got[PREV] == [118, 119]  # the window does not cut the chain: p = 3 links to p = 2


# Example 3: expected tokens from the pool, offset +1 (EAGLE draft), valid lengths 3 and 16.
def test_example_pool_offset_plus_one(planner):
    kwargs, offsets, _ = build([1, 2], [3, 2], pool=linear_pool(), valid=[3, 16], offset=1,
                               capacity=5)
    assert offsets == [0, 3, 5]
    got = run(planner, kwargs)
    assert got[POS] == [0, 1, 2, 0, 1]
    assert got[TOKEN] == [1017, 1018, -1, 1033, 1034]


# Example 4: offset -1: position 0 has no expected token.
def test_example_negative_offset(planner):
    kwargs, _, _ = build([1], [2], pool=linear_pool(), valid=[16], offset=-1, capacity=2)
    assert run(planner, kwargs)[TOKEN] == [-1, 1016]


# Example 5: the gate: enable 0, total 0, and total > capacity with enable 1 write nothing.
@pytest.mark.parametrize("case", ["enable-0", "total-0", "overflow-enable-1", "overflow-enable-0"])
def test_example_gate_writes_nothing(planner, case):
    if case == "enable-0":
        kwargs, _, _ = build([1], [3], enable=0, capacity=4)
    elif case == "total-0":
        kwargs, offsets, _ = build([1, 0], [0, 7], capacity=4)
        assert offsets[-1] == 0
    else:
        kwargs, _, _ = build([1], [5], capacity=4, enable=int(case.endswith("1")))
    assert run(planner, kwargs) == {name: [POISON] * 4 for name in (SLOT, TOKEN, POS, PREV)}


# Example 6: the LUT clamp: slots 20 and 21 are past a LUT of 20 and read its last entry.
def test_example_lut_clamp(planner):
    lut = torch.arange(20, dtype=torch.int64) + 100
    kwargs, _, _ = build([1], [6], lut=lut, capacity=6)
    got = run(planner, kwargs)
    assert got[SLOT] == [116, 117, 118, 119, 119, 119]
    assert got[PREV] == [-1, 116, 117, 118, 119, 119]


# Example 7: outside the table: a row past max_reqs, and a prefix past max_seq_len.
def test_example_outside_the_table(planner):
    kwargs, _, _ = build([5, 1], [2, 18], capacity=20)
    got = run(planner, kwargs)
    assert got[POS] == [0, 1] + list(range(18))
    assert got[SLOT] == [-1, -1] + list(range(16, 32)) + [-1, -1]
    assert got[PREV] == [-1, -1, -1] + list(range(16, 31)) + [31, -1]


# Example 8: a pool row shorter than position + offset, though valid_lens says 16.
def test_example_pool_row_shorter_than_valid_len(planner):
    kwargs, _, _ = build([1], [6], pool=linear_pool(cols=4), valid=[16], capacity=6)
    assert run(planner, kwargs)[TOKEN] == [1004, 1005, 1006, 1007, -1, -1]


def test_total_equals_capacity_fills_every_element(planner):
    kwargs, offsets, expected = build([2, 3], [3, 4], capacity=7)
    assert offsets[-1] == 7
    assert run(planner, kwargs) == expected


def test_window_wider_than_prefix_is_the_whole_prefix(planner):
    kwargs, _, _ = build([1], [3], window=10, lut=torch.arange(64, dtype=torch.int64), capacity=3)
    got = run(planner, kwargs)
    assert got[POS] == [0, 1, 2] and got[SLOT] == [16, 17, 18] and got[PREV] == [-1, 16, 17]


# Example 9: -1 in the table is not translated; a -1 LUT entry is returned as it is.
def test_lut_sentinels_and_negative_slots_pass_through(planner):
    table = linear_table()
    table[1, 1] = -1  # a -1 slot in the table is not translated
    lut = torch.arange(64, dtype=torch.int64) + 100
    lut[18] = -1      # a LUT entry of -1 (an evicted SWA slot) is returned as it is
    kwargs, _, _ = build([1], [4], table=table, lut=lut, capacity=4)
    got = run(planner, kwargs)
    assert got[SLOT] == [116, -1, -1, 119]
    assert got[PREV] == [-1, 116, -1, -1]


def test_empty_lut_gives_no_slot(planner):
    kwargs, _, _ = build([1], [2], lut=torch.zeros(0, dtype=torch.int64), capacity=2)
    got = run(planner, kwargs)
    assert got[SLOT] == [-1, -1] and got[PREV] == [-1, -1] and got[POS] == [0, 1]


def test_zero_requests_write_nothing(planner):
    kwargs, offsets, _ = build([], [], capacity=3)
    assert offsets == [0]
    assert run(planner, kwargs)[SLOT] == [POISON] * 3


def test_a_second_launch_overwrites_the_first(planner):
    """A graph replay refills the same tensors: a smaller second plan leaves the first's tail."""
    kwargs, _, _ = build([1], [5], capacity=6)
    planner(**kwargs)
    kwargs["prefix_lens"].fill_(2)
    kwargs["verify_offsets_scratch"][1] = 2
    got = run(planner, kwargs)
    assert got[POS] == [0, 1, 2, 3, 4, POISON]  # entries 2..4 are the first plan's, untouched
    assert got[SLOT] == [16, 17, 18, 19, 20, POISON]


def _random_case(rng: random.Random):
    bs = rng.randint(1, 6)
    rpi = [rng.choice([0, 1, 2, 3, 3, 5]) for _ in range(bs)]
    prefix = [rng.choice([0, 1, 2, 5, 9, 16, 17, -3]) for _ in range(bs)]
    window = rng.choice([0, 0, 2, 4, 100, -1])
    lut = None if rng.random() < 0.5 else torch.tensor(
        [rng.randint(-1, 500) for _ in range(rng.choice([1, 30, 64]))], dtype=torch.int64)
    pool = valid = None
    if rng.random() < 0.6:
        pool = linear_pool(rows=rng.choice([2, 4]), cols=rng.choice([4, 16]))
        valid = [rng.randint(-1, 20) for _ in range(bs)]
    return dict(rpi=rpi, prefix=prefix, window=window, lut=lut, pool=pool, valid=valid,
                offset=rng.choice([-2, -1, 0, 1, 3]))


@pytest.mark.parametrize("seed", range(6))
def test_random_mixes_match_the_oracle(planner, seed):
    case = _random_case(random.Random(seed))
    rpi, prefix = case.pop("rpi"), case.pop("prefix")
    kwargs, offsets, expected = build(rpi, prefix, **case)
    capacity = offsets[-1] + 3
    got = run(planner, kwargs)
    assert got == {name: tail(values, capacity) for name, values in expected.items()}


def test_many_random_mixes_python_planner_matches_the_oracle():
    """The reference planner on 300 more mixes (cheap; the GPU planners get the 6 above)."""
    launch = get_planner("python")
    rng = random.Random(2026)
    for _ in range(300):
        case = _random_case(rng)
        rpi, prefix = case.pop("rpi"), case.pop("prefix")
        kwargs, offsets, expected = build(rpi, prefix, **case)
        got = run(launch, kwargs)
        assert got == {name: tail(values, offsets[-1] + 3) for name, values in expected.items()}


def test_bs_4096_mostly_padding(planner):
    """The wrapper's largest batch: three live rows among 4093 padding rows (12-step search)."""
    rpi, prefix = [0] * 4096, [7] * 4096
    for r, (row, length) in {0: (1, 2), 2047: (2, 3), 4095: (3, 1)}.items():
        rpi[r], prefix[r] = row, length
    kwargs, offsets, expected = build(rpi, prefix, capacity=8)
    assert offsets[-1] == 6
    got = run(planner, kwargs)
    assert got[SLOT] == [16, 17, 32, 33, 34, 48, POISON, POISON]
    assert got[POS] == [0, 1, 0, 1, 2, 0, POISON, POISON]
    assert got == {name: tail(values, 8) for name, values in expected.items()}


def test_the_driver_launch_takes_only_calls_of_its_signature():
    """The entries kernel's driver launch (impls/entries_planner/numba_driver_launch.py) is
    compiled for one signature: a tensor of another dtype, rank or layout, a scalar past int64,
    or the wrong count, takes Numba's launch (which types each call) instead."""
    from impls.entries_planner import numba_driver_launch as driver

    def sample():
        arrays = [torch.zeros(2, dtype=torch.int64), torch.zeros(2, dtype=torch.int64),
                  torch.zeros(3, 5, dtype=torch.int32), torch.zeros(7, dtype=torch.int64),
                  torch.zeros(3, dtype=torch.int64), torch.zeros(1, dtype=torch.int32),
                  torch.zeros(4, 6, dtype=torch.int32), torch.zeros(2, dtype=torch.int64),
                  *[torch.zeros(9, dtype=torch.int64) for _ in range(4)]]
        return arrays, [2, 9, 7, 1, 1, -3, 4]

    arrays, scalars = sample()
    assert driver._matches(tuple(arrays), tuple(scalars))
    args = driver.signature().args
    assert [(str(a.dtype), a.ndim, a.layout) for a in args[:12]] == \
        [("int64", 1, "C")] * 2 + [("int32", 2, "C"), ("int64", 1, "C"), ("int64", 1, "C"),
                                   ("int32", 1, "C"), ("int32", 2, "C")] + [("int64", 1, "C")] * 5
    assert [str(a) for a in args[12:]] == ["int64"] * 7
    assert [(str(d), n) for d, n in driver.EXPECTED] == \
        [(f"torch.{a.dtype}", a.ndim) for a in args[:12]]
    for change in ("dtype", "rank", "layout", "big", "count"):
        arrays, scalars = sample()
        if change == "dtype":
            arrays[2] = arrays[2].to(torch.int64)
        elif change == "rank":
            arrays[0] = arrays[0].reshape(1, 2)
        elif change == "layout":
            arrays[2] = torch.zeros(5, 3, dtype=torch.int32).t()
        elif change == "big":
            scalars[5] = 1 << 63
        else:
            arrays = arrays[:-1]
        assert not driver._matches(tuple(arrays), tuple(scalars)), change
