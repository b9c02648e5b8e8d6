"""Self-tests of the harness's pieces: the PRNG and array specs, the table and LUT generators, the
error catalog and the validator's order, the input builder, the diff, the case loader, the runner's
reports, and properties of the pure-Python planner."""

from __future__ import annotations

import json
import os
import string
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conformance.corpus import arrays
from conformance.corpus import generators as tables
from conformance.corpus.arrays import ArraySpecError, evaluate, spec_len, splitmix64
from conformance.corpus.loader import REPO_ROOT, CaseFileError, load_corpus
from conformance.engine.diff import differing_indices, field_diff
from conformance.engine.inputs import (
    GUARD,
    POISONS,
    TAIL,
    TAIL_GARBAGE,
    allocate_outputs,
    apply_overrides,
    launcher_kwargs,
)
from conformance.engine.runner import ConformanceFailure, Target, rerun_command, run_case
from impls.buffers import PlanBuffers
from impls.constants import PLAN_BS_BLOCK_SIZE, SCRATCH_MIN_LEN
from impls.errors import CATALOG, PlanError, identify
from impls.python_planner import launch as python_launch
from impls.python_planner import plan_values
from impls.validate import TENSOR_NAMES, inner_args, validate_launch, validate_offsets_inputs

CPU = torch.device("cpu")
M64 = (1 << 64) - 1
FAST = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


# ---------------------------------------------------------------------------------------------
# splitmix64 and array specs


def test_splitmix64_published_first_outputs_for_seed_0():
    assert splitmix64(0, 3).tolist() == [0xE220A8397B1DCDAF, 0x6E789E6AA1B965F4,
                                         0x06C45D188009454F]
    assert splitmix64(0, 3).dtype == np.uint64
    assert splitmix64(0, 0).tolist() == []


def _splitmix64_scalar(seed: int, n: int) -> list[int]:
    """The module docstring's definition, one Python int at a time."""
    out, state = [], seed % (1 << 64)
    for _ in range(n):
        state = (state + 0x9E3779B97F4A7C15) & M64
        z = state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M64
        out.append(z ^ (z >> 31))
    return out


@FAST
@given(st.integers(min_value=0, max_value=M64), st.integers(min_value=0, max_value=40))
def test_splitmix64_vectorised_matches_scalar_definition(seed, n):
    assert splitmix64(seed, n).tolist() == _splitmix64_scalar(seed, n)


def test_random_ints_and_permutation():
    assert arrays.random_ints(0, 3, 10, 19) == [10 + x % 10 for x in _splitmix64_scalar(0, 3)]
    assert arrays.random_ints(0, 3, 10, 19) == [15, 10, 19]
    assert arrays.random_ints(5, 4, -2, -2) == [-2, -2, -2, -2]
    with pytest.raises(ArraySpecError, match=r"random: high \(1\) is below low \(2\)"):
        arrays.random_ints(0, 1, 2, 1)
    perm = arrays.permutation(7, 50)
    assert perm.dtype == np.int64 and sorted(perm.tolist()) == list(range(50))
    assert perm.tolist() == np.argsort(splitmix64(7, 50), kind="stable").tolist()
    assert arrays.permutation(8, 50).tolist() != perm.tolist()


@pytest.mark.parametrize(("spec", "values"), [
    ([3, -1, 0], [3, -1, 0]),
    ({"fill": 7, "len": 3}, [7, 7, 7]),
    ({"fill": 7, "len": 0}, []),
    ({"arange": {"len": 4}}, [0, 1, 2, 3]),
    ({"arange": {"len": 3, "start": 5, "step": -2}}, [5, 3, 1]),
    ({"cycle": [1, 0], "len": 5}, [1, 0, 1, 0, 1]),
    ({"random": {"len": 3, "low": 10, "high": 19, "seed": 0, "prng": "splitmix64"}}, [15, 10, 19]),
    ({"concat": [[1], {"fill": 0, "len": 2}, {"arange": {"len": 2, "start": 9}}]}, [1, 0, 0, 9, 10]),
    ({"concat": []}, []),
])
def test_array_specs(spec, values):
    assert evaluate(spec) == values
    assert spec_len(spec) == len(values)


@pytest.mark.parametrize(("spec", "message"), [
    ({"fill": 1}, "len must be a non-negative integer, got None"),
    ({"fill": 1, "len": -1}, "len must be a non-negative integer, got -1"),
    ({"fill": 1, "len": True}, "len must be a non-negative integer, got True"),
    ({"fill": 1, "len": (1 << 20) + 1}, "len 1048577 exceeds the limit of 1048576 elements"),
    ({"cycle": [], "len": 2}, "cycle needs a non-empty pattern"),
    ({"random": {"len": 2, "low": 0, "high": 1, "seed": 0, "prng": "pcg"}}, "unknown prng 'pcg'"),
    ({"concat": [{"fill": 0, "len": 1 << 20}, [1]]}, "concat exceeds the limit"),
    ({"bogus": 1}, "unknown array spec keys ['bogus']"),
    ("12", "not an array spec: '12'"),
])
def test_bad_array_specs(spec, message):
    with pytest.raises(ArraySpecError) as excinfo:
        evaluate(spec)
    assert message in str(excinfo.value)


_leaf_specs = st.one_of(
    st.lists(st.integers(-5, 5), max_size=6),
    st.builds(lambda v, n: {"fill": v, "len": n}, st.integers(-9, 9), st.integers(0, 6)),
    st.builds(lambda n, a, s: {"arange": {"len": n, "start": a, "step": s}},
              st.integers(0, 6), st.integers(-9, 9), st.integers(-3, 3)),
    st.builds(lambda p, n: {"cycle": p, "len": n}, st.lists(st.integers(-3, 3), min_size=1,
                                                             max_size=3), st.integers(0, 7)),
    st.builds(lambda n, lo, span, seed: {"random": {"len": n, "low": lo, "high": lo + span,
                                                    "seed": seed}},
              st.integers(0, 6), st.integers(-50, 50), st.integers(0, 20), st.integers(0, 1 << 40)),
)
_array_specs = st.recursive(_leaf_specs, lambda inner: st.builds(
    lambda parts: {"concat": parts}, st.lists(inner, max_size=3)), max_leaves=6)


@FAST
@given(_array_specs)
def test_spec_len_agrees_with_evaluate(spec):
    values = evaluate(spec)
    assert spec_len(spec) == len(values)
    assert all(isinstance(v, int) for v in values)
    if isinstance(spec, dict) and "random" in spec:
        r = spec["random"]
        assert all(r["low"] <= v <= r["high"] for v in values)


# ---------------------------------------------------------------------------------------------
# Table and LUT generators


def test_linear_table():
    table = tables.build_table({"generator": "linear", "max_reqs": 4, "max_seq_len": 16}, CPU)
    assert table.dtype == torch.int32 and table.shape == (4, 16) and table.is_contiguous()
    assert table[2, 6].item() == 38 and table[3, 15].item() == 63 and table[0, 0].item() == 0


def test_permuted_table_is_a_seeded_shuffle_of_linear():
    spec = {"generator": "permuted", "max_reqs": 3, "max_seq_len": 5, "seed": 11}
    table = tables.build_table(spec, CPU)
    assert table.dtype == torch.int32 and table.shape == (3, 5) and table.is_contiguous()
    assert sorted(table.flatten().tolist()) == list(range(15))
    assert table.flatten().tolist() == arrays.permutation(11, 15).tolist()
    assert torch.equal(tables.build_table(spec, CPU), table)
    assert not torch.equal(tables.build_table({**spec, "seed": 12}, CPU), table)


def test_explicit_table_and_set():
    spec = {"generator": "explicit", "values": [[1, 2, 3], [4, 5, 6]], "set": [[1, 0, -7]]}
    assert tables.table_shape(spec) == (2, 3)
    assert tables.build_table(spec, CPU).tolist() == [[1, 2, 3], [-7, 5, 6]]
    empty = tables.build_table({"generator": "explicit", "values": []}, CPU)
    assert empty.shape == (0, 0)


@pytest.mark.parametrize(("spec", "values"), [
    ({"generator": "identity", "len": 4}, [0, 1, 2, 3]),
    ({"generator": "shift", "len": 3, "shift": 100}, [100, 101, 102]),
    ({"generator": "permutation", "len": 6, "seed": 3},
     np.argsort(splitmix64(3, 6), kind="stable").tolist()),
    ({"generator": "explicit", "values": [9, -1, 4]}, [9, -1, 4]),
    ({"generator": "identity", "len": 4, "set": [[0, -5], [3, 99]]}, [-5, 1, 2, 99]),
])
def test_luts(spec, values):
    lut = tables.build_lut(spec, CPU)
    assert lut.dtype == torch.int64 and lut.dim() == 1 and lut.tolist() == values
    assert tables.lut_len(spec) == len(values)


def test_generator_errors():
    assert tables.build_lut(None, CPU) is None
    with pytest.raises(ArraySpecError, match="unknown table generator 'zigzag'"):
        tables.build_table({"generator": "zigzag", "max_reqs": 1, "max_seq_len": 1}, CPU)
    with pytest.raises(ArraySpecError, match=r"table 65536 x 65536 is outside"):
        tables.build_table({"generator": "linear", "max_reqs": 1 << 16, "max_seq_len": 1 << 16}, CPU)
    with pytest.raises(ArraySpecError, match=r"table -1 x 4 is outside"):
        tables.build_table({"generator": "linear", "max_reqs": -1, "max_seq_len": 4}, CPU)
    with pytest.raises(ArraySpecError, match=r"LUT length -2 is outside"):
        tables.build_lut({"generator": "identity", "len": -2}, CPU)
    with pytest.raises(ArraySpecError, match="unknown LUT generator 'square'"):
        tables.build_lut({"generator": "square", "len": 2}, CPU)


# ---------------------------------------------------------------------------------------------
# The error catalog

SPEC_ORDER = [
    "swa-lut-required", "contiguous", "dtype", "bs-range", "write-offsets-len-positive",
    "write-req-capacity-non-negative", "verify-capacity-non-negative", "stride-positive",
    "lut-len-non-negative", "has-swa-lut-bool", "lut-len-positive", "lut-len-zero", "not-1d",
    "not-2d", "length", "min-length", "write-offsets-len-mismatch", "bs-exceeds-capacity",
    "stride-mismatch", "device", "write-plan-capacity", "verify-plan-capacity",
]
SAMPLE_FIELDS = {
    "name": "out_write_offsets", "expected_dtype": "torch.int64", "actual_dtype": "torch.int32",
    "type_name": "NoneType", "shape": "(2, 3)", "expected_device": "cuda:0",
    "actual_device": "cpu",
}


def _fill(error_id: str, number: int = 7) -> str:
    fields = {f for _, f, _, _ in string.Formatter().parse(CATALOG[error_id].template) if f}
    return CATALOG[error_id].format(**{f: SAMPLE_FIELDS.get(f, number) for f in fields})


def test_catalog_is_in_spec_order():
    assert list(CATALOG) == SPEC_ORDER
    assert all(entry.template.startswith("kv-canary: ") for entry in CATALOG.values())
    assert {entry.reach for entry in CATALOG.values()} == {"launcher", "validator", "allocate"}


@pytest.mark.parametrize("error_id", SPEC_ORDER)
def test_identify_every_template(error_id):
    assert identify(_fill(error_id)) == error_id
    assert identify(_fill(error_id, number=-4096)) == error_id
    assert identify(_fill(error_id) + " ") is None  # whole message only
    assert identify("x" + _fill(error_id)) is None


def test_identify_spec_texts_and_near_misses():
    assert identify("kv-canary: offsets kernel bs must be in [0, 4096], got 4097") == "bs-range"
    assert identify("kv-canary: offsets kernel bs must be in [0, 4096], got many") is None
    assert identify("kv-canary: prefix_lens must have dtype torch.int64, got torch.int32") == "dtype"
    assert identify("kv-canary: lut_tensor must be 1-D, got shape (2, 2)") == "not-1d"
    assert identify("kv-canary: lut_tensor must be 1-D, got shape ()") == "not-1d"
    assert identify("kv-canary: out_verify_offsets_scratch length must be >= 4097, got 12") \
        == "min-length"
    assert identify("kv-canary: prefix_lens length must be 3, got 2") == "length"
    assert identify("kv-canary: prefix_lens must be contigous") is None
    assert identify("") is None


def test_plan_error_carries_its_id():
    err = PlanError("bs-range", "text")
    assert isinstance(err, ValueError) and err.error_id == "bs-range" and str(err) == "text"
    with pytest.raises(KeyError):
        CATALOG["bs-range"].format(bs=1)


def test_allocator_errors_in_order():
    with pytest.raises(PlanError) as excinfo:
        PlanBuffers.allocate(write_req_capacity=0, verify_capacity=0)
    assert excinfo.value.error_id == "write-plan-capacity"
    assert str(excinfo.value) == "kv-canary: WritePlan write_req_capacity must be positive, got 0"
    with pytest.raises(PlanError) as excinfo:
        PlanBuffers.allocate(write_req_capacity=2, verify_capacity=-3)
    assert str(excinfo.value) == "kv-canary: VerifyPlan verify_capacity must be positive, got -3"
    buffers = PlanBuffers.allocate(write_req_capacity=3, verify_capacity=5)
    lengths = {k: v.numel() for k, v in buffers.launcher_kwargs().items()
               if isinstance(v, torch.Tensor)}
    assert lengths == {"out_verify_offsets_scratch": SCRATCH_MIN_LEN, "out_write_offsets": 4,
                       "out_write_seed_slot_indices": 3, "out_verify_num_valid": 1,
                       "out_verify_enable": 1, "out_write_num_valid_reqs": 1}


# ---------------------------------------------------------------------------------------------
# The validator's order: any set of faults at once raises the earliest in spec §4's order.

# fault name -> (rank: (spec item, tensor index), catalog id)
FAULTS = {
    "no-lut-with-window": ((0, 0), "swa-lut-required"),
    "prefix-strided": ((1, 1), "contiguous"),
    "write-offsets-strided": ((1, 6), "contiguous"),
    "rpi-int32": ((2, 0), "dtype"),
    "enable-int64": ((2, 9), "dtype"),
    "bs-4097": ((3, 0), "bs-range"),
    "verify-capacity-negative": ((6, 0), "verify-capacity-non-negative"),
    "extend-too-long": ((12, 2), "length"),
    "table-1d": ((12, 3), "not-2d"),
    "scratch-short": ((12, 5), "min-length"),
    "write-offsets-one-long": ((13, 0), "write-offsets-len-mismatch"),
    "seeds-below-bs": ((14, 0), "bs-exceeds-capacity"),
    "prefix-on-meta": ((16, 1), "device"),
}


def _faulty_kwargs(faults: set[str]) -> tuple[dict, dict[str, str]]:
    """Launcher kwargs with ``faults`` planted (bs 2, capacity 4), and each fault's message."""
    bs = 4097 if "bs-4097" in faults else 2
    cap = 1 if "seeds-below-bs" in faults else 4
    wlen = cap + 1 + ("write-offsets-one-long" in faults)

    def t(n, dtype=torch.int64, strided=False, device="cpu"):
        if strided:  # built on its device: moving a strided view makes a contiguous copy
            return torch.zeros(2 * n, dtype=dtype, device=device)[::2]
        return torch.zeros(n, dtype=dtype, device=device)

    kwargs = {
        "req_pool_indices": t(bs, torch.int32 if "rpi-int32" in faults else torch.int64),
        "prefix_lens": t(2, strided="prefix-strided" in faults,
                         device="meta" if "prefix-on-meta" in faults else "cpu"),
        "extend_seq_lens": t(3 if "extend-too-long" in faults else 2),
        "req_to_token": (torch.zeros(64, dtype=torch.int32) if "table-1d" in faults
                         else torch.zeros(4, 16, dtype=torch.int32)),
        "full_to_swa_index_mapping": None,
        "out_verify_offsets_scratch": t(SCRATCH_MIN_LEN - ("scratch-short" in faults)),
        "out_write_offsets": t(wlen, strided="write-offsets-strided" in faults),
        "out_write_seed_slot_indices": t(cap),
        "out_verify_num_valid": t(1, torch.int32),
        "out_verify_enable": t(1, torch.int64 if "enable-int64" in faults else torch.int32),
        "out_write_num_valid_reqs": t(1, torch.int32),
        "swa_window_size": 5 if "no-lut-with-window" in faults else 0,
        "verify_capacity": -1 if "verify-capacity-negative" in faults else 10,
    }
    messages = {
        "no-lut-with-window": "kv-canary: launch_canary_plan_kernels requires "
                              "full_to_swa_index_mapping when swa_window_size > 0",
        "prefix-strided": "kv-canary: prefix_lens must be contiguous",
        "write-offsets-strided": "kv-canary: out_write_offsets must be contiguous",
        "rpi-int32": "kv-canary: req_pool_indices must have dtype torch.int64, got torch.int32",
        "enable-int64": "kv-canary: out_verify_enable must have dtype torch.int32, got torch.int64",
        "bs-4097": "kv-canary: offsets kernel bs must be in [0, 4096], got 4097",
        "verify-capacity-negative": "kv-canary: verify_capacity must be non-negative, got -1",
        "extend-too-long": "kv-canary: extend_seq_lens length must be 2, got 3",
        "table-1d": "kv-canary: req_to_token must be 2-D, got shape (64,)",
        "scratch-short": "kv-canary: out_verify_offsets_scratch length must be >= 4097, got 4096",
        "write-offsets-one-long": f"kv-canary: write_offsets_len must equal write_req_capacity "
                                  f"+ 1, got {wlen} and {cap}",
        "seeds-below-bs": f"kv-canary: bs=2 exceeds write_req_capacity={cap}",
        "prefix-on-meta": "kv-canary: prefix_lens must be on out_verify_offsets_scratch's device "
                          "cpu, got meta",
    }
    return kwargs, messages


def test_valid_base_passes_the_validator():
    kwargs, _ = _faulty_kwargs(set())
    plan = validate_launch(**kwargs)
    assert (plan.bs, plan.write_req_capacity, plan.lut_len, plan.has_swa_lut) == (2, 4, 0, False)
    assert (plan.max_reqs, plan.max_seq_len, plan.req_to_token_stride0) == (4, 16, 16)


@pytest.mark.parametrize("fault", sorted(FAULTS))
def test_each_fault_alone(fault):
    kwargs, messages = _faulty_kwargs({fault})
    with pytest.raises(PlanError) as excinfo:
        validate_launch(**kwargs)
    assert (excinfo.value.error_id, str(excinfo.value)) == (FAULTS[fault][1], messages[fault])


@FAST
@given(st.sets(st.sampled_from(sorted(FAULTS)), min_size=2))
def test_several_faults_raise_the_earliest(faults):
    kwargs, messages = _faulty_kwargs(faults)
    first = min(faults, key=lambda f: FAULTS[f][0])
    with pytest.raises(PlanError) as excinfo:
        validate_launch(**kwargs)
    assert (excinfo.value.error_id, str(excinfo.value)) == (FAULTS[first][1], messages[first])


def test_inner_validator_reaches_checks_the_launcher_cannot():
    kwargs, _ = _faulty_kwargs(set())
    inner = inner_args(**kwargs)
    for derived, error_id, message in [
        ({"write_req_capacity": -1}, "write-req-capacity-non-negative",
         "kv-canary: write_req_capacity must be non-negative, got -1"),
        ({"req_to_token_stride0": 0}, "stride-positive",
         "kv-canary: req_to_token_stride0 must be positive, got 0"),
        ({"lut_len": -1}, "lut-len-non-negative", "kv-canary: lut_len must be non-negative, got -1"),
        ({"has_swa_lut": 1}, "has-swa-lut-bool", "kv-canary: has_swa_lut must be bool, got int"),
        ({"lut_len": 1}, "lut-len-zero", "kv-canary: lut_len must be 0 when has_swa_lut is False"),
        ({"req_to_token_stride0": 17}, "stride-mismatch",
         "kv-canary: req_to_token_stride0=17 does not match req_to_token.stride(0)=16"),
        ({"write_offsets_len": 0, "lut_len": -1}, "write-offsets-len-positive",
         "kv-canary: write_offsets_len must be positive, got 0"),
    ]:
        with pytest.raises(PlanError) as excinfo:
            validate_offsets_inputs(**{**inner, **derived})
        assert (excinfo.value.error_id, str(excinfo.value)) == (error_id, message)
    assert TENSOR_NAMES[4] == "lut_tensor" and len(TENSOR_NAMES) == 11


# ---------------------------------------------------------------------------------------------
# The input builder: garbage tails, guard zones, poison, overrides


class _Step:
    def __init__(self, **inputs):
        self.inputs = inputs


class _Case:
    def __init__(self, cap, scratch_len=None):
        self.write_req_capacity = cap
        self.inputs = {} if scratch_len is None else {"scratch_len": scratch_len}


def test_inputs_have_garbage_tails_and_outputs_guard_zones():
    step = _Step(req_pool_indices=[1, 0], prefix_lens=[3, 4], extend_seq_lens=[5, 6])
    table = torch.zeros(2, 2, dtype=torch.int32)
    buffers = allocate_outputs(_Case(3), CPU)
    kwargs = launcher_kwargs(step, CPU, table, None, buffers)
    for name, values in (("req_pool_indices", [1, 0]), ("prefix_lens", [3, 4]),
                         ("extend_seq_lens", [5, 6])):
        tensor = kwargs[name]
        assert tensor.tolist() == values and tensor.is_contiguous() and tensor.dtype == torch.int64
        assert tensor._base.tolist() == values + [TAIL_GARBAGE[name]] * TAIL
    assert TAIL_GARBAGE["req_pool_indices"] != 0  # the tail rows are active
    assert kwargs["swa_window_size"] == 0 and kwargs["verify_capacity"] == 1 << 20
    lengths = {name: b.view.numel() for name, b in buffers.items()}
    assert lengths == {"out_verify_offsets_scratch": SCRATCH_MIN_LEN, "out_write_offsets": 4,
                       "out_write_seed_slot_indices": 3, "out_verify_num_valid": 1,
                       "out_verify_enable": 1, "out_write_num_valid_reqs": 1}
    for name, buffer in buffers.items():
        assert kwargs[name] is buffer.view
        assert buffer.view.storage_offset() == GUARD and buffer.view.is_contiguous()
        assert buffer.storage.numel() == lengths[name] + 2 * GUARD
        buffer.poison("b")
        base = POISONS["b"][buffer.storage.dtype]
        assert buffer.storage.tolist() == [base + i for i in range(buffer.storage.numel())]
    assert allocate_outputs(_Case(1, scratch_len=7), CPU)["out_verify_offsets_scratch"] \
        .view.numel() == 7


def test_poisons_differ_and_fit_their_dtypes():
    for dtype, bits in ((torch.int64, 64), (torch.int32, 32)):
        a, b = POISONS["a"][dtype], POISONS["b"][dtype]
        assert a != b and a > 0 > b
        assert -(1 << (bits - 1)) <= b and a + SCRATCH_MIN_LEN + 2 * GUARD < 1 << (bits - 1)


def test_overrides():
    x = torch.arange(4, dtype=torch.int64)
    y = torch.ones(3, dtype=torch.int32)
    kwargs = {"prefix_lens": x, "req_to_token": y, "full_to_swa_index_mapping": None}
    out = apply_overrides(kwargs, [{"tensor": "prefix_lens", "layout": "strided"}])
    assert out["prefix_lens"].tolist() == [0, 1, 2, 3] and not out["prefix_lens"].is_contiguous()
    assert kwargs["prefix_lens"] is x  # the input dict is not changed
    out = apply_overrides(kwargs, [{"tensor": "prefix_lens", "dtype": "int32"}])
    assert out["prefix_lens"].dtype == torch.int32 and out["prefix_lens"].tolist() == [0, 1, 2, 3]
    out = apply_overrides(kwargs, [{"tensor": "prefix_lens", "shape": [2, 2]}])
    assert out["prefix_lens"].shape == (2, 2) and out["prefix_lens"].dtype == torch.int64
    out = apply_overrides(kwargs, [{"swap": ["prefix_lens", "req_to_token"]}])
    assert out["prefix_lens"] is y and out["req_to_token"] is x
    out = apply_overrides(kwargs, [{"tensor": "prefix_lens", "device": "meta"}])
    assert out["prefix_lens"].device.type == "meta"
    with pytest.raises(ValueError, match="override of full_to_swa_index_mapping, which is None"):
        apply_overrides(kwargs, [{"tensor": "full_to_swa_index_mapping", "dtype": "int32"}])
    # A one-element "strided" tensor is still contiguous in torch: cases must widen it first.
    one = apply_overrides({"t": torch.zeros(1)}, [{"tensor": "t", "layout": "strided"}])["t"]
    assert one.stride() == (2,) and one.is_contiguous()


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


# ---------------------------------------------------------------------------------------------
# The case loader


def _case_doc(case_id: str, **changes) -> dict:
    doc = {
        "id": case_id, "description": "one decode", "tags": ["steps"],
        "source": {"kind": "project", "ref": "tests"}, "golden_check": "hand",
        "inputs": {"req_to_token": {"generator": "linear", "max_reqs": 4, "max_seq_len": 16},
                   "req_pool_indices": [2], "prefix_lens": [7], "extend_seq_lens": [1]},
        "expect": {"out_verify_offsets_scratch": [0, 7], "out_write_offsets": [0, 1],
                   "out_write_seed_slot_indices": [38], "out_verify_num_valid": 7,
                   "out_verify_enable": 1, "out_write_num_valid_reqs": 1},
    }
    doc.update(changes)
    return doc


def _load(tmp_path: Path, files: dict[str, object]):
    for name, doc in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(doc if isinstance(doc, str) else json.dumps(doc))
    return load_corpus([tmp_path])


def test_loader_group_defaults_and_order(tmp_path):
    group = {"group": "g", "defaults": {"tags": ["padding"], "golden_check": "default check",
                                        "inputs": {"verify_capacity": 3}},
             "cases": [_case_doc("g-one", tags=["padding", "boundary"]),
                       {k: v for k, v in _case_doc("g-two").items() if k != "golden_check"}]}
    cases, errors = _load(tmp_path, {"b/group.json": group, "a/single.json": _case_doc("single"),
                                     "schema.json": "{not even json"})
    assert errors == []  # schema.json is never loaded as a case
    assert [c.id for c in cases] == ["single", "g-one", "g-two"]
    single, one, two = cases
    assert (single.json_path, one.json_path, two.json_path) == ("$", "$.cases[0]", "$.cases[1]")
    assert one.tags == ("padding", "boundary") and two.tags == ("padding", "steps")
    assert one.golden_check == "hand" and two.golden_check == "default check"
    assert two.inputs["verify_capacity"] == 3 and two.inputs["prefix_lens"] == [7]
    assert two.write_req_capacity == 1 and single.entry == "launcher"
    assert two.location.endswith("group.json $.cases[1]")
    assert single.location.endswith("single.json")


@pytest.mark.parametrize(("doc", "json_path", "message"), [
    ('{"id": "x",\n "tags": [}', "line 2 column 11", "malformed JSON: Expecting value"),
    (_case_doc("x", source={"kind": "rumour", "ref": "r"}), "$.source.kind", "'rumour' is not one of"),
    (_case_doc("X-upper"), "$.id", "does not match"),
    (_case_doc("x", expect={"out_verify_offsets_scratch": [0], "out_write_offsets": [0, 1],
                            "out_write_seed_slot_indices": [38], "out_verify_num_valid": 7,
                            "out_verify_enable": 1, "out_write_num_valid_reqs": 1}),
     "$.expect.out_verify_offsets_scratch", "golden has 1 values, bs=1 needs 2"),
    (_case_doc("x", expect={"error": {"type": "ValueError", "id": "no-such-id", "message": "m"}}),
     "$.expect.error.id", "unknown catalog id 'no-such-id'"),
    (_case_doc("x", expect={"error": {"type": "ValueError", "id": "bs-range",
                                      "message": "kv-canary: prefix_lens must be contiguous"}}),
     "$.expect.error.message", "it matches 'contiguous'"),
])
def test_loader_faults_name_file_and_path(tmp_path, doc, json_path, message):
    good = _case_doc("good")
    cases, errors = _load(tmp_path, {"bad.json": doc, "good.json": good})
    assert [c.id for c in cases] == ["good"]  # the good case still loads
    (error,) = errors
    assert isinstance(error, CaseFileError) and error.path == tmp_path / "bad.json"
    assert error.json_path == json_path, error
    assert message in error.message, error
    assert str(error).startswith(f"{tmp_path / 'bad.json'}: at {json_path}: ")


def test_loader_fault_inside_a_group_and_duplicates(tmp_path):
    group = {"group": "g", "cases": [_case_doc("g-ok"), _case_doc("g-bad", tags="nope"),
                                     _case_doc("dup")]}
    cases, errors = _load(tmp_path, {"a.json": _case_doc("dup"), "b.json": group})
    assert [c.id for c in cases] == ["dup", "g-ok"]
    assert [(e.path.name, e.json_path, e.case_id) for e in errors] == [
        ("b.json", "$.cases[1].tags", "g-bad"), ("b.json", "$.cases[2].id", "dup")]
    assert errors[1].message == f"duplicate case id 'dup' (first in {tmp_path / 'a.json'})"


def test_loader_missing_directory_and_repository_corpus(tmp_path):
    cases, errors = load_corpus([tmp_path / "nowhere"])
    assert cases == [] and [e.message for e in errors] == ["no such cases directory"]
    cases, errors = load_corpus()
    assert errors == [], [str(e) for e in errors]
    assert len({c.id for c in cases}) == len(cases)
    assert {"spec7-no-prefix", "spec7-swa-window-totals"} <= {c.id for c in cases}
    assert all(c.path.is_relative_to(REPO_ROOT / "cases") for c in cases)


# ---------------------------------------------------------------------------------------------
# The runner's reports


def test_rerun_command_quotes():
    assert rerun_command("spec7-no-prefix", "python") == \
        "pytest conformance/ --planner python --case spec7-no-prefix"
    assert rerun_command("a b", "my mod:f") == "pytest conformance/ --planner 'my mod:f' --case 'a b'"
    assert rerun_command("err-x", "validator") == "pytest conformance/ --case err-x"


def test_runner_reports_a_raise_on_valid_input(tmp_path):
    (case,), _ = _load(tmp_path, {"c.json": _case_doc("c")})

    def crashes(**kwargs):
        raise RuntimeError("boom in the kernel")

    with pytest.raises(ConformanceFailure) as excinfo:
        run_case(case, Target("crashes", crashes, CPU))
    text = str(excinfo.value)
    assert "raised RuntimeError on a valid input:" in text
    assert "RuntimeError: boom in the kernel" in text
    assert text.splitlines()[-1] == (f"  rerun: pytest conformance/ --planner crashes "
                                     f"--cases {tmp_path} --case c")


def test_runner_catches_a_write_into_an_input_tail(tmp_path):
    (case,), _ = _load(tmp_path, {"c.json": _case_doc("c")})

    def scribbles(**kwargs):
        python_launch(**kwargs)
        torch.as_strided(kwargs["extend_seq_lens"], (2,), (1,))[1] = 0  # past bs: the tail

    with pytest.raises(ConformanceFailure) as excinfo:
        run_case(case, Target("scribbles", scribbles, CPU))
    text = str(excinfo.value)
    assert "modified its input (inputs are read-only, spec §5)" in text
    assert "extend_seq_lens: 1 element(s) differ, first at index 1" in text


def test_runner_error_case_requires_untouched_outputs(tmp_path):
    doc = _case_doc("e", expect={"error": {"type": "ValueError", "id": "verify-capacity-non-negative",
                                           "message": "kv-canary: verify_capacity must be "
                                                      "non-negative, got -1"}})
    doc["inputs"]["verify_capacity"] = -1
    (case,), errors = _load(tmp_path, {"e.json": doc})
    assert errors == []
    run_case(case, Target("python", python_launch, CPU))

    def writes_then_raises(**kwargs):
        kwargs["out_verify_enable"].fill_(1)
        python_launch(**kwargs)

    with pytest.raises(ConformanceFailure) as excinfo:
        run_case(case, Target("w", writes_then_raises, CPU))
    assert "out_verify_enable: 1 element(s) differ, first at index 0" in str(excinfo.value)
    assert "expected is the poison there" in str(excinfo.value)


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
    doc = _case_doc("prop", inputs={
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
    (case,), errors = _load(directory, {"prop.json": doc})
    assert errors == []
    run_case(case, Target("python", python_launch, CPU))


def test_bs_block_size_constant():
    assert PLAN_BS_BLOCK_SIZE == 4096 and SCRATCH_MIN_LEN == 4097


# ---------------------------------------------------------------------------------------------
# Two harness bugs these tests found (fixed): the rerun command left out --cases, and two faults
# in one case file gave two [load] items with the same node id.


def test_rerun_command_finds_a_case_outside_the_default_corpus(tmp_path):
    (case,), _ = _load(tmp_path, {"c.json": _case_doc("outside")})

    def crashes(**kwargs):
        raise RuntimeError("boom")

    with pytest.raises(ConformanceFailure) as excinfo:
        run_case(case, Target("crashes", crashes, CPU))
    rerun = str(excinfo.value).splitlines()[-1]
    assert rerun.startswith("  rerun: pytest conformance/ ")
    assert "--cases" in rerun and str(tmp_path) in rerun, rerun


def test_load_fault_items_have_unique_node_ids(tmp_path):
    group = {"group": "g", "cases": [_case_doc("g-ok"), _case_doc("g-bad", tags="nope"),
                                     _case_doc("g-ok")]}
    (tmp_path / "g.json").write_text(json.dumps(group))
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTEST_ADDOPTS", "PYTEST_XDIST_WORKER")}
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "conformance/", "-p", "no:cacheprovider", "--collect-only",
         "-q", "--planner", "python", "--cases", str(tmp_path)],
        cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=120)
    ids = [line for line in result.stdout.splitlines() if "::" in line]
    assert len([i for i in ids if "[load]" in i]) == 2, result.stdout  # two faults, two items
    assert len(ids) == len(set(ids)) == 3, ids
