"""Every corpus case on every Numba one-pass candidate (impls/offsets_planner/numba_one_pass.py) in
Numba's CUDA simulator: about 42 minutes on 2 cores (1 to 8 minutes a candidate: the simulator
runs each block's 32 threads as Python threads, and the look-back candidates wait on each other's
flags), so neither the default run nor ``pytest -m slow`` takes it; ``pytest -m candidates``
does.

What the other runs keep of these candidates: ``pytest -m slow`` runs each one on a subset of the
corpus (one case of each tag that reaches a kernel, the hazard and steps cases) and on random
plans at the bs edges (tests/test_one_pass.py); the default planners' designs run the whole corpus
in every ``pytest conformance/``; on a GPU the sweep judges every candidate
(impls/offsets_planner/harness/sweeps/one_pass.py).
"""

from __future__ import annotations

import pytest

from tests.test_one_pass import CANDIDATES, IDS, nop, top, whole_corpus_passes

pytestmark = [pytest.mark.candidates,
              pytest.mark.skipif(top.MODE != "interpreter" or not nop.SIMULATED,
                                 reason="CPU stand-ins only (the GPU figures come from the sweep)")]
NUMBA = [(c, i) for c, i in zip(CANDIDATES, IDS) if c[0] == "numba"]


@pytest.mark.parametrize(("framework", "design", "config"), [c for c, _ in NUMBA],
                         ids=[i for _, i in NUMBA])
def test_whole_corpus_passes_in_the_simulator(framework, design, config):
    whole_corpus_passes(framework, design, config)
