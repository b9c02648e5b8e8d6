"""Properties of the pure-Python planner (impls/offsets_planner/python_planner.py) on arbitrary batches, and
the constants it plans with (spec section 2)."""

from __future__ import annotations

import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conformance.engine.runner import Target, run_case
from impls.offsets_planner.constants import PLAN_BS_BLOCK_SIZE, SCRATCH_MIN_LEN
from impls.offsets_planner.python_planner import launch as python_launch
from impls.offsets_planner.python_planner import plan_values
from tests.case_docs import case_doc, load_files

CPU = torch.device("cpu")
FAST = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


# ---------------------------------------------------------------------------------------------
# Properties of the pure-Python planner on arbitrary batches

_batches = st.integers(0, 12).flatmap(lambda bs: st.tuples(
    st.lists(st.integers(-2, 6), min_size=bs, max_size=bs),          # rows: padding, out of range
    st.lists(st.integers(-5, 40), min_size=bs, max_size=bs),         # prefix, negatives included
    st.lists(st.integers(-5, 40), min_size=bs, max_size=bs),         # extend
    st.integers(-3, 20),                                             # W
    st.integers(0, 100),                                             # verify capacity
    st.sampled_from([0, 1, 7, 50]),                                  # LUT length (0: none)
))


@FAST
@given(_batches)
def test_python_planner_exclusive_prefix_sum_identities(batch):
    rows, prefix, extend, window, capacity, lut_len = batch
    max_reqs, max_seq_len = 4, 16
    slot_reads, lut_reads = [], []

    def read_slot(row, pos):
        slot_reads.append((row, pos))
        assert 0 <= row < max_reqs and 0 <= pos < max_seq_len
        return (row * max_seq_len + pos) * (-1 if row == 3 else 1)  # row 3 holds negative slots

    def read_lut(index):
        lut_reads.append(index)
        assert 0 <= index < lut_len
        return 1000 + index

    verify, write, seeds, num_valid, enable, reqs = plan_values(
        rows, prefix, extend, read_slot, read_lut, max_reqs=max_reqs, max_seq_len=max_seq_len,
        lut_len=lut_len, swa_window_size=window, verify_capacity=capacity)
    bs = len(rows)
    assert len(verify) == len(write) == bs + 1 and len(seeds) == bs
    assert verify[0] == write[0] == 0
    for r in range(bs):
        active = rows[r] != 0
        verify_len = (min(prefix[r], window) if window > 0 else prefix[r]) if active else 0
        write_len = extend[r] if active else 0
        assert verify[r + 1] - verify[r] == max(verify_len, 0)
        assert write[r + 1] - write[r] == max(write_len, 0)
        if active and prefix[r] > 0 and extend[r] > 0 and 0 <= rows[r] < max_reqs:
            slot = rows[r] * max_seq_len + min(prefix[r], max_seq_len) - 1
            slot = -slot if rows[r] == 3 else slot
            expected_seed = 1000 + min(slot, lut_len - 1) if lut_len and slot >= 0 else slot
        else:
            expected_seed = -1
        assert seeds[r] == expected_seed, r
    assert verify == sorted(verify) and write == sorted(write)  # non-decreasing
    assert num_valid == min(verify[-1], capacity)
    assert enable == (0 if verify[-1] > capacity else 1)
    assert reqs == bs
    if not lut_len:
        assert lut_reads == []


@settings(max_examples=25, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(batch=_batches)
def test_python_planner_passes_the_harness_on_arbitrary_batches(tmp_path_factory, batch):
    """An independent model of spec §5 writes the golden; the harness runs it on the reference,
    with room past bs so that any stray write shows."""
    rows, prefix, extend, window, capacity, _ = batch
    rows = [min(max(r, 0), 3) for r in rows]  # rows in range of the spec §7 table
    window = min(window, 0)  # no LUT here, so only full attention (a negative W behaves as 0)
    verify, write, seeds = [0], [0], []
    for row, p, e in zip(rows, prefix, extend):
        active = row != 0
        verify.append(verify[-1] + (max(p, 0) if active else 0))
        write.append(write[-1] + (max(e, 0) if active else 0))
        seeds.append(row * 16 + min(p, 16) - 1 if active and p > 0 and e > 0 else -1)
    # hazard: prefixes may pass the row (spec §6), which the loader requires the tag for
    doc = case_doc("prop", tags=["hazard"], inputs={
        "req_to_token": {"generator": "linear", "max_reqs": 4, "max_seq_len": 16}, "lut": None,
        "swa_window_size": window, "verify_capacity": capacity,
        "write_req_capacity": len(rows) + 2,
        "req_pool_indices": rows, "prefix_lens": prefix, "extend_seq_lens": extend})
    doc["expect"] = {"out_verify_offsets_scratch": verify, "out_write_offsets": write,
                     "out_write_seed_slot_indices": seeds,
                     "out_verify_num_valid": min(verify[-1], capacity),
                     "out_verify_enable": int(verify[-1] <= capacity),
                     "out_write_num_valid_reqs": len(rows)}
    directory = tmp_path_factory.mktemp("prop")
    (case,), errors = load_files(directory, {"prop.json": doc})
    assert errors == []
    run_case(case, Target("python", python_launch, CPU))


def test_bs_block_size_constant():
    assert PLAN_BS_BLOCK_SIZE == 4096 and SCRATCH_MIN_LEN == 4097
