"""The input builder (conformance/engine/inputs.py): garbage tails, guard zones, poison,
overrides."""

from __future__ import annotations

import pytest
import torch

from conformance.engine.inputs import (
    GUARD,
    POISON_RANGES,
    POISONS,
    TAIL,
    TAIL_GARBAGE,
    allocate_outputs,
    apply_overrides,
    launcher_kwargs,
)
from impls.offsets_planner.constants import SCRATCH_MIN_LEN

CPU = torch.device("cpu")


# ---------------------------------------------------------------------------------------------
# The input builder: garbage tails, guard zones, poison, overrides


class _Step:
    def __init__(self, **inputs):
        self.inputs = inputs


class _Case:
    def __init__(self, cap, scratch_len=None):
        self.write_req_capacity = cap
        self.inputs = {} if scratch_len is None else {"scratch_len": scratch_len}


@pytest.mark.usefixtures("fixed_poison_seed")  # distinct values: ~1 seed in 2e6 draws a repeat
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
        low, high = POISON_RANGES[buffer.storage.dtype]
        values = buffer.storage.tolist()
        assert all(-high <= v <= -low for v in values)  # run b: negative, far from any offset
        assert len(set(values)) == len(values) > 2  # random per element, never base + i
        assert all(y - x != 1 for x, y in zip(values, values[1:]))
    assert allocate_outputs(_Case(1, scratch_len=7), CPU)["out_verify_offsets_scratch"] \
        .view.numel() == 7


@pytest.mark.usefixtures("fixed_poison_seed")  # int32 "a" within 4129 of 2**31: ~1 seed in 260,000
def test_poisons_differ_and_fit_their_dtypes():
    for dtype, bits in ((torch.int64, 64), (torch.int32, 32)):
        a, b = POISONS["a"][dtype], POISONS["b"][dtype]
        assert a != b and a > 0 > b
        assert -(1 << (bits - 1)) <= b and a + SCRATCH_MIN_LEN + 2 * GUARD < 1 << (bits - 1)
        low, high = POISON_RANGES[dtype]
        assert 0 < low < high < 1 << (bits - 1)  # both signs fit the dtype


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
