"""The run fingerprint every results file and report opens with (conformance/fingerprint.py)."""

from __future__ import annotations

import torch

from conformance.fingerprint import fingerprint


def test_fingerprint_says_n_a_where_torch_has_no_cuda_build():
    """A CPU build of torch has no CUDA version: the fingerprint says ``n/a`` (as for the driver),
    never Python's ``None`` as text."""
    fp = fingerprint()
    assert fp["cuda"] == (torch.version.cuda or "n/a")
    assert "None" not in fp.values()
    if not torch.cuda.is_available():
        assert fp["driver"] == "n/a" and fp["gpu"] == "none (CPU only)"
