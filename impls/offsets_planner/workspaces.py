"""Per-device look-back workspaces: one zeroed int64 tensor per device, made on first use and then
kept valid by the kernel that owns it (the epoch scheme of
:mod:`impls.offsets_planner.triton_roles_lookback`).

Make a device's workspace outside any CUDA-graph capture: a zeroing captured into a graph would
run only at replay. One launch at a time per workspace (one stream).
"""

from __future__ import annotations

import torch


class Workspaces:
    """The workspaces of one kernel family, int64 ``[length]`` each, keyed by device.

    Attributes:
        length: words per workspace.
        by_device: ``str(device) -> tensor``, the workspaces made so far.
    """

    def __init__(self, length: int) -> None:
        self.length = length
        self.by_device: dict[str, torch.Tensor] = {}

    def get(self, device: torch.device) -> torch.Tensor:
        """``device``'s workspace, zeroed when first made."""
        key = str(device)
        ws = self.by_device.get(key)
        if ws is None:
            ws = self.by_device[key] = torch.zeros(self.length, dtype=torch.int64, device=device)
        return ws

    def existing(self, device: torch.device) -> torch.Tensor | None:
        """``device``'s workspace if it was made already, else None (nothing is allocated)."""
        return self.by_device.get(str(device))

    def reset(self, device: torch.device) -> None:
        """Zero ``device``'s workspace again (after a launch that did not finish)."""
        self.get(device).zero_()
