"""The error catalog (impls/offsets_planner/errors.py): spec section 4's messages, their ids, and the allocator's
errors (impls/offsets_planner/buffers.py)."""

from __future__ import annotations

import string

import pytest
import torch

from impls.offsets_planner.buffers import PlanBuffers
from impls.offsets_planner.constants import SCRATCH_MIN_LEN
from impls.offsets_planner.errors import CATALOG, PlanError, identify


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
