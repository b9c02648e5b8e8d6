"""Output buffers for one plan, allocated once and reused every step (spec sections 3 and 4).

Upstream allocates a write plan and a verify plan once per server and reuses them across forward
steps and CUDA-graph replays; :class:`PlanBuffers` is the offsets planner's share of them.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from impls.offsets_planner.constants import SCRATCH_MIN_LEN
from impls.offsets_planner.contract import (
    BY_NAME,
    DEVICE_REFERENCE,
    OUTPUT_NAMES,
    VERIFY_CAPACITY_NAME,
    output_lengths,
)
from impls.offsets_planner.errors import raise_error
from impls.offsets_planner.validate import zero_lut


@dataclass(frozen=True)
class PlanBuffers:
    """The six output tensors of the launcher, plus the verify capacity they were sized for.

    Attributes:
        out_verify_offsets_scratch: int64 [4097].
        out_write_offsets: int64 [write_req_capacity + 1].
        out_write_seed_slot_indices: int64 [write_req_capacity].
        out_verify_num_valid: int32 [1].
        out_verify_enable: int32 [1].
        out_write_num_valid_reqs: int32 [1].
        verify_capacity: entries the verify plan holds (stage two's buffer length).
    """

    out_verify_offsets_scratch: torch.Tensor
    out_write_offsets: torch.Tensor
    out_write_seed_slot_indices: torch.Tensor
    out_verify_num_valid: torch.Tensor
    out_verify_enable: torch.Tensor
    out_write_num_valid_reqs: torch.Tensor
    verify_capacity: int

    @classmethod
    def allocate(
        cls, *, write_req_capacity: int, verify_capacity: int, device: torch.device | str = "cpu"
    ) -> PlanBuffers:
        """Allocate zeroed buffers for up to ``write_req_capacity`` requests.

        Raises:
            PlanError: ``write-plan-capacity`` when ``write_req_capacity <= 0``, then
                ``verify-plan-capacity`` when ``verify_capacity <= 0`` (spec section 4, "buffer
                allocation"; the write plan is checked first).
        """
        if write_req_capacity <= 0:
            raise_error("write-plan-capacity", n=write_req_capacity)
        if verify_capacity <= 0:
            raise_error("verify-plan-capacity", n=verify_capacity)

        fields: dict[str, object] = {
            name: torch.zeros(n, dtype=BY_NAME[name].dtype, device=device)
            for name, n in output_lengths(write_req_capacity, SCRATCH_MIN_LEN).items()}
        fields[VERIFY_CAPACITY_NAME] = verify_capacity
        # the no-LUT stand-in on the buffers' device (index resolved), now rather than during a
        # later CUDA-graph capture
        zero_lut(fields[DEVICE_REFERENCE].device)
        return cls(**fields)

    def launcher_kwargs(self) -> dict[str, object]:
        """The output arguments and ``verify_capacity``, ready to splat into a launcher call."""
        return {name: getattr(self, name) for name in (*OUTPUT_NAMES, VERIFY_CAPACITY_NAME)}
