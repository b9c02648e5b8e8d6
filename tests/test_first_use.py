"""conformance/robustness/first_use.py: the kernel frameworks' first compile and launch, done by
the isolation worker before any reading, so that what a framework does at its first use in a
process is not read as a built-in planner's change (on an H100 every isolated ``numba-cuda``
case failed so, right in every byte: reports/gpu/2026-12-06-h/)."""
from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest
import torch

from conformance.robustness import first_use
from tests.planner_folder_runs import ROOT

GPU = torch.cuda.is_available()

FIRST_CALLS = textwrap.dedent("""
    import json, os, sys
    sys.path.insert(0, {root!r})
    import torch
    from conformance.robustness.first_import import warm_up
    from conformance.robustness.first_use import exercise
    from conformance.robustness import outside_view, torch_state
    from tests import test_hostile14 as t
    warm_up()
    ran = exercise()
    from conformance.corpus.corpus_subject import registry
    seen = {{}}
    for name in ("numba-cuda", "triton"):
        launch = registry.get_planner(name)  # imported as the worker imports it, never probed
        before, view = torch_state.snapshot(), outside_view.read(os.getpid())
        kwargs = {{k: v.cuda() if isinstance(v, torch.Tensor) else v
                   for k, v in t._kwargs().items()}}
        launch(**kwargs)
        torch.cuda.synchronize()
        assert kwargs["out_write_offsets"].tolist() == [0, 8, 9, 10]  # spec section 7
        seen[name] = (torch_state.changes(before, torch_state.snapshot())
                      + outside_view.changed(view, outside_view.read(os.getpid())))
    print(json.dumps({{"ran": ran, "changes": seen}}))
""")


@pytest.mark.skipif(GPU, reason="a CUDA device: the GPU test below")
def test_nothing_is_compiled_where_torch_sees_no_cuda_device():
    assert first_use.exercise() == []
    assert first_use.RAN == []


@pytest.mark.skipif(not GPU, reason="needs a CUDA device")
def test_after_the_frameworks_first_use_a_built_in_planners_first_call_changes_nothing():
    """In a fresh process, as the worker does: imports, :func:`first_use.exercise`, then each
    GPU planner's first call (its kernels' first compile) read inside and from ``/proc``."""
    proc = subprocess.run([sys.executable, "-c", FIRST_CALLS.format(root=str(ROOT))],
                          capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr[-3000:]
    found = json.loads(proc.stdout.splitlines()[-1])
    assert found == {"ran": ["triton", "numba.cuda"],
                     "changes": {"numba-cuda": [], "triton": []}}, found
