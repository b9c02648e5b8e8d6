"""The validator (impls/offsets_planner/validate.py): any set of faults at once raises the earliest in spec
section 4's order, and the inner validator reaches checks the launcher cannot."""

from __future__ import annotations

import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from impls.offsets_planner.constants import SCRATCH_MIN_LEN
from impls.offsets_planner.errors import PlanError
from impls.offsets_planner.contract import VALIDATED_TENSOR_NAMES
from impls.offsets_planner.validate import inner_args, validate_launch, validate_offsets_inputs

FAST = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


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
    assert VALIDATED_TENSOR_NAMES[4] == "lut_tensor" and len(VALIDATED_TENSOR_NAMES) == 11
