"""One GPU per pytest-xdist worker: ``gw0 -> cuda:0``, ``gw1 -> cuda:1``, ...

Registered from :mod:`conformance.plugin.hooks` (``pytest_plugins``). pytest-xdist sets
``PYTEST_XDIST_WORKER`` before a worker builds its config, so :func:`pin_worker` runs when this
module is imported: before any planner module, probe or test touches CUDA. The worker's number
modulo the visible device count picks its GPU:

* if CUDA is not initialised in this process yet (the normal case), ``CUDA_VISIBLE_DEVICES`` is
  narrowed to that one device, so torch, Triton, Numba and the crash-isolation child (which
  inherits the environment) all see it as ``cuda:0``;
* otherwise ``torch.cuda.set_device`` is the fallback (torch work only).

Nothing happens outside xdist, with fewer than two visible GPUs, or when
``CONFORMANCE_NO_PIN=1``. The device count is read without initialising CUDA: from
``CUDA_VISIBLE_DEVICES`` when set, else NVML through torch, else ``nvidia-smi -L``.
"""

from __future__ import annotations

import os
import re
import subprocess

PINNED: str | None = None
"""What :func:`pin_worker` did in this process, e.g. ``gw1 -> GPU 1 (CUDA_VISIBLE_DEVICES=1)``;
None when it did nothing. Stored with the benchmark results."""


def worker_index(worker_id: str | None) -> int | None:
    """The number of an xdist worker id (``gw3`` -> 3); None for no worker or an odd id."""
    match = re.fullmatch(r"gw(\d+)", worker_id or "")
    return int(match.group(1)) if match else None


def gpu_for_worker(worker_id: str | None, device_count: int) -> int | None:
    """The visible-device index worker ``worker_id`` uses: its number modulo ``device_count``.

    None when not under xdist (``worker_id`` None) or with no device to choose from.
    """
    index = worker_index(worker_id)
    if index is None or device_count <= 0:
        return None
    return index % device_count


def _visible_entries() -> list[str] | None:
    value = os.environ.get("CUDA_VISIBLE_DEVICES")
    if value is None:
        return None
    return [v.strip() for v in value.split(",") if v.strip()]


def visible_device_count() -> int:
    """Devices this process may use, read without initialising CUDA (0 when unknown)."""
    entries = _visible_entries()
    if entries is not None:
        return len(entries)
    try:
        import torch

        count = torch.cuda._device_count_nvml()
        if count >= 0:
            return count
    except Exception:  # no NVML, or a torch without this helper
        pass
    try:
        out = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True, timeout=20)
        return sum(1 for line in out.stdout.splitlines() if line.startswith("GPU "))
    except Exception:  # no driver: a CPU machine
        return 0


def _cuda_initialised() -> bool:
    import sys

    torch = sys.modules.get("torch")
    return bool(torch is not None and torch.cuda.is_initialized())


def pin_worker(worker_id: str | None = None) -> str | None:
    """Pin this process to its worker's GPU (see the module docstring); returns what it did."""
    global PINNED
    worker_id = worker_id or os.environ.get("PYTEST_XDIST_WORKER")
    if os.environ.get("CONFORMANCE_NO_PIN") == "1":
        return None
    count = visible_device_count()
    index = gpu_for_worker(worker_id, count)
    if index is None or count < 2:
        return None
    if not _cuda_initialised():
        entries = _visible_entries() or [str(i) for i in range(count)]
        os.environ["CUDA_VISIBLE_DEVICES"] = entries[index]
        PINNED = f"{worker_id} -> GPU {index} (CUDA_VISIBLE_DEVICES={entries[index]})"
    else:
        import torch

        torch.cuda.set_device(index)
        PINNED = f"{worker_id} -> cuda:{index} (torch.cuda.set_device; CUDA was initialised)"
    return PINNED


pin_worker()
