"""Attacks on isolation itself (planners in ``tests/planted/isolation_attacks.py``,
``judge_at_import.py``, ``sleeps_at_import.py``), each with the verdict it must get, from one
``pytest conformance/`` run shared by the assertions below:

* a module whose top level rebinds the judge is never imported by pytest's process (availability
  is probed in a child), and its cases fail; ``python -m conformance fuzz`` finds its divergences;
* a planner that hunts the golden through its callers' frames and the heap finds none;
* rebinding the observer's comparison or pushing a ``TorchFunctionMode`` in the worker does not
  hide an input written through ``.data``: the harness compares the bytes itself;
* a planner that recognises base + i poison fails (the fills are random per seed);
* SIGSTOP / SIGTERM / SIGINT / SIGKILL sent to ``os.getppid()`` crash only that case;
* a module that sleeps at import fails its planner's cases with the timeout of a call.
"""

from __future__ import annotations

import json
import os
import shlex
import sys

import pytest
import torch

from conformance.engine import inputs
from conformance.engine.runner import ConformanceFailure, Target, resolve_device, run_case
from tests.planted import isolation_attacks
from tests.subproc import run_cli, run_pytest

ATTACKS = "tests.planted.isolation_attacks"
VERDICTS = {
    f"{ATTACKS}:hunts_goldens": "fail",
    f"{ATTACKS}:rebinds_observer": "fail",
    f"{ATTACKS}:pushes_function_mode": "fail",
    f"{ATTACKS}:recognises_fixture": "fail",
    f"{ATTACKS}:stops_parent": "crash",
    f"{ATTACKS}:terminates_parent": "crash",
    f"{ATTACKS}:interrupts_parent": "crash",
    f"{ATTACKS}:kills_parent": "crash",
    "tests.planted.judge_at_import:launch": None,  # any failing status (the judge's evidence)
    "tests.planted.sleeps_at_import:launch": "timeout",
}
CASE = "spec7-no-prefix"


@pytest.fixture(scope="module")
def attacked(tmp_path_factory):
    """One run of every attack on one case: (process, items, results, mark file)."""
    tmp = tmp_path_factory.mktemp("attacks")
    mark = tmp / "imported-in"
    args = [arg for planner in VERDICTS for arg in ("--planner", planner)]
    os.environ["CONFORMANCE_PLANTED_MARK"] = str(mark)
    try:
        proc, items = run_pytest(tmp, *args, "--case", CASE, "--isolate-timeout", "10",
                                 timeout=600)
    finally:
        del os.environ["CONFORMANCE_PLANTED_MARK"]
    results = json.loads((tmp / "results.json").read_text())
    return proc, items, results, mark


@pytest.mark.slow  # the attack battery: one run of a worker per attack, about 40 s on 2 cores
def test_every_attack_fails_and_the_run_ends_with_its_summary(attacked):
    proc, _, results, _ = attacked
    assert proc.returncode == 1, proc.stdout[-3000:]
    assert proc.stdout.count("conformance summary") == 1
    assert results["complete"] is True
    status = {r["planner"]: r["status"] for r in results["results"]}
    assert set(status) == set(VERDICTS)
    for planner, verdict in VERDICTS.items():
        assert status[planner] != "pass", planner
        if verdict is not None:
            assert status[planner] == verdict, (planner, status[planner])


@pytest.mark.slow  # the attack battery: one run of a worker per attack, about 40 s on 2 cores
def test_a_module_that_rebinds_the_judge_never_reaches_pytest(attacked):
    _, items, _, mark = attacked
    assert not mark.exists() or "pytest" not in mark.read_text()
    text = items[f"{CASE}[tests.planted.judge_at_import:launch]"].text
    assert "the planner never wrote this element" in text


@pytest.mark.slow  # the attack battery: one run of a worker per attack, about 40 s on 2 cores
def test_observer_patches_and_mode_stacks_in_the_worker_do_not_hide_an_input_write(attacked):
    _, items, _, _ = attacked
    for planner in ("rebinds_observer", "pushes_function_mode"):
        text = items[f"{CASE}[{ATTACKS}:{planner}]"].text
        assert "modified its input (inputs are read-only, spec §5)" in text, text
        assert "extend_seq_lens: 1 element(s) differ, first at index 0" in text


@pytest.mark.slow  # the attack battery: one run of a worker per attack, about 40 s on 2 cores
def test_signals_to_the_parent_crash_only_their_case(attacked):
    _, items, results, _ = attacked
    texts = {p: items[f"{CASE}[{ATTACKS}:{p}]"].text for p in
             ("stops_parent", "terminates_parent", "interrupts_parent", "kills_parent")}
    assert "the planner stopped the worker's parent process (SIGSTOP" in texts["stops_parent"] \
        or "the planner sent SIGSTOP to the worker's parent" in texts["stops_parent"]
    for planner, sig in (("terminates_parent", "SIGTERM"), ("interrupts_parent", "SIGINT")):
        assert f"the planner sent {sig} to the worker's parent process" in texts[planner]
    assert any(why in texts["kills_parent"] for why in (
        "killed by signal 9 (SIGKILL)", "the planner sent SIGKILL to the worker's parent",
        "the worker's parent process died while the worker lived")), texts["kills_parent"]
    assert results["exitstatus"] == 1  # pytest itself was neither stopped nor killed


@pytest.mark.slow  # the attack battery: one run of a worker per attack, about 40 s on 2 cores
def test_a_module_that_sleeps_at_import_times_out_like_a_call(attacked):
    _, items, _, _ = attacked
    text = items[f"{CASE}[tests.planted.sleeps_at_import:launch]"].text
    assert "did not finish in 10 s (the timeout of a call): stopped" in text


@pytest.mark.slow  # the attack battery: one run of a worker per attack, about 40 s on 2 cores
def test_rerun_commands_and_the_fingerprint_carry_the_poison_seed(attacked):
    _, _, results, _ = attacked
    seed = results["fingerprint"]["poison_seed"]
    assert isinstance(seed, int) and seed >= 0
    for r in results["results"]:
        words = shlex.split(r["rerun"])
        assignments = words[:next(i for i, w in enumerate(words) if "=" not in w)]
        assert f"CONFORMANCE_POISON_SEED={seed}" in assignments, r["rerun"]


def test_fuzz_judges_a_judge_patching_module_out_of_its_reach(tmp_path):
    proc = run_cli("fuzz", "--planner", "tests.planted.judge_at_import:launch", "--n", "2",
                   "--seed", "1", "--out", str(tmp_path), "--no-progress", timeout=300)
    assert proc.returncode == 1, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert "0 divergence" not in proc.stdout


# ---- the fills, in this process ---------------------------------------------------------------


def test_poison_is_random_per_element_and_drawn_from_the_seed():
    seed = inputs.poison_seed()
    try:
        inputs.set_poison_seed(12345)
        a = inputs.poison_values("a", torch.int64, 40).tolist()
        guards = dict(inputs.TABLE_GUARD_GARBAGE)
        assert all(v > 1 << 40 for v in a) and len(set(a)) == 40
        assert all(y - x != 1 for x, y in zip(a, a[1:]))  # never base + i
        b = inputs.poison_values("b", torch.int32, 40).tolist()
        assert all(-(1 << 31) <= v < -(1 << 30) for v in b)
        inputs.set_poison_seed(12346)
        assert inputs.poison_values("a", torch.int64, 40).tolist() != a
        assert inputs.TABLE_GUARD_GARBAGE != guards
        inputs.set_poison_seed(12345)  # the same seed, the same fills
        assert inputs.poison_values("a", torch.int64, 40).tolist() == a
        assert inputs.TABLE_GUARD_GARBAGE == guards
    finally:
        inputs.set_poison_seed(seed)


def test_a_planner_that_recognises_the_fixture_fails_in_process_too():
    from conformance.corpus.loader import load_corpus

    case = next(c for c in load_corpus()[0] if c.id == CASE)
    with pytest.raises(ConformanceFailure, match="out_verify_num_valid: 1 element"):
        run_case(case, Target("fixture", isolation_attacks.recognises_fixture,
                              resolve_device("cpu")))


def test_poison_seed_option_refuses_what_is_not_a_seed(tmp_path):
    proc, _ = run_pytest(tmp_path, "--poison-seed", "-3", "--planner", "python")
    assert proc.returncode == 4 and "argument --poison-seed: '-3': must be >= 0" in proc.stderr


if sys.platform != "linux":  # /proc, SCM_RIGHTS, prctl
    pytestmark = pytest.mark.skip(reason="isolation's guarantees are Linux's")

