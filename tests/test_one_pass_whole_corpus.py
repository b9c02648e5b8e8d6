"""Every corpus case on every one-pass candidate (impls/offsets_planner/triton_one_pass.py,
impls/offsets_planner/numba_one_pass.py) in Triton's interpreter and Numba's CUDA simulator: about
50 minutes on 2 cores (Triton's 14 candidates about 8, Numba's 13 about 42: the simulator runs
each block's 32 threads as Python threads, and the look-back candidates wait on each other's
flags), so neither the default run nor ``pytest -m slow`` takes it; ``pytest -m long`` does.

What the other runs keep of these candidates: ``pytest -m slow`` runs each one on a subset of the
corpus (one case of each tag that reaches a kernel, the hazard and steps cases) and on random
plans at the bs edges (tests/test_one_pass.py); the default planners' designs run the whole corpus
in every ``pytest conformance/``; on a GPU the sweep judges every candidate
(impls/offsets_planner/harness/sweeps/one_pass.py).
"""

from __future__ import annotations

import pytest

from tests.test_one_pass import CANDIDATES, IDS, whole_corpus_passes

pytestmark = [pytest.mark.long]


@pytest.mark.parametrize(("framework", "design", "config"), CANDIDATES, ids=IDS)
def test_whole_corpus_passes(framework, design, config):
    from tests.test_one_pass import nop, top

    if top.MODE != "interpreter" or not nop.SIMULATED:
        pytest.skip("CPU stand-ins only (the GPU figures come from the sweep)")
    whole_corpus_passes(framework, design, config)
