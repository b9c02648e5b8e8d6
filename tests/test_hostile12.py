"""Twelfth hostile review, kept as tests: wrong planners that try to pass the corpus from inside
the isolation worker without touching the harness (planted: tests/planted/hostile12_planners.py).
Each test asserts what the harness must do; an attack that still works is a strict xfail whose
reason names the hole and a fix. Closed since: a read outside the table whose value is thrown
away or laundered (the worker's pages around every input are ``PROT_NONE``,
conformance/robustness/guard_pages.py). Each planner is also shown wrong outside the harness, in
this process, so that a green run of it is a wrong verdict and not a harmless quirk.
"""

from __future__ import annotations

import json

import pytest
import torch

from tests.planner_folder_runs import corpus_run, planted_run, results_of

PLANTED = "tests.planted.hostile12_planners"


def _run(tmp_path, planner: str, *cases: str, select: str | None = None):
    """(exit code, output, {case id: status}) of one corpus run of ``planner``."""
    return planted_run(tmp_path, f"{PLANTED}:{planner}", *cases, select=select)


def _buffers(bs_capacity: int = 8) -> dict:
    """A launcher's keyword arguments on the spec's linear 4 x 16 table (section 7), no LUT."""
    table = torch.arange(64, dtype=torch.int32).view(4, 16)
    return {"req_to_token": table, "full_to_swa_index_mapping": None,
            "out_verify_offsets_scratch": torch.zeros(8193, dtype=torch.int64),
            "out_write_offsets": torch.zeros(bs_capacity + 1, dtype=torch.int64),
            "out_write_seed_slot_indices": torch.zeros(bs_capacity, dtype=torch.int64),
            "out_verify_num_valid": torch.zeros(1, dtype=torch.int32),
            "out_verify_enable": torch.ones(1, dtype=torch.int32),
            "out_write_num_valid_reqs": torch.zeros(1, dtype=torch.int32),
            "swa_window_size": 0, "verify_capacity": 1000}


def _requests(rpi, prefix, extend) -> dict:
    return {"req_pool_indices": torch.tensor(rpi), "prefix_lens": torch.tensor(prefix),
            "extend_seq_lens": torch.tensor(extend)}


# === a read outside the table whose value is thrown away ======================================


READ_CASES = ("hazard-zero-extend-past-table", "hazard-row-too-large", "hazard-row-negative")


def test_the_discarding_planner_reads_outside_the_table():
    """The planner really reads outside: a table whose storage ends at the tensor's last element
    is read 3 elements past it (row 3, prefix 20 of a 4 x 16 table); in this process a tracing
    stand-in for the raw read records the address."""
    from tests.planted import hostile12_planners as planted

    seen = []
    real = planted._read_table_at
    planted._read_table_at = lambda table, flat: seen.append((table.numel(), flat))
    try:
        kwargs = {**_buffers(), **_requests([3], [20], [0])}
        planted.reads_seed_slot_and_discards(**kwargs)
    finally:
        planted._read_table_at = real
    assert seen == [(64, 67)]  # element 67 of a 64-element table
    assert kwargs["out_write_seed_slot_indices"][0].item() == -1  # and the right seed


@pytest.mark.slow
def test_a_read_outside_the_table_whose_value_is_thrown_away_fails(tmp_path):
    """Caught (was green: the harness saw a read outside only through a value it left in an
    output): the worker maps the pages around the table ``PROT_NONE``
    (conformance/robustness/guard_pages.py), so the read faults -- past the end on the plain run's
    exact table (rows 3 and 4), before the start on runs a and b's (row -1, into its guard zone)."""
    code, out, statuses = _run(tmp_path, "reads_seed_slot_and_discards", *READ_CASES)
    assert code != 0 and statuses == dict.fromkeys(READ_CASES, "crash"), \
        (code, statuses, out[-3000:])
    # one report a case (under CI=true pytest's short summary repeats whole messages: cut off)
    reports = out.split("short test summary info")[0]
    assert reports.count("crash (isolated): killed by signal 11 (SIGSEGV)") == len(READ_CASES)


# === the read past the table, its value laundered =============================================


LAST_ROW_CASES = ("hazard-prefix-past-last-row", "hazard-prefix-huge")


def test_the_laundering_planner_stores_no_table_value():
    """Outside the harness: the seed of prefix 1000 on the last row of a 4 x 16 table is read
    past the table's end (here: the byte after a tensor of its own) and stored plus one."""
    from tests.planted import hostile12_planners as planted

    kwargs = {**_buffers(), **_requests([3], [1000], [1])}
    seen = []
    real = planted._read_table_at
    planted._read_table_at = lambda table, flat: seen.append(flat) or 7
    try:
        planted.launders_the_read_past_the_table(**kwargs)
    finally:
        planted._read_table_at = real
    assert seen and seen[0] >= 64  # past the table's 64 elements
    assert kwargs["out_write_seed_slot_indices"][0].item() == 8


@pytest.mark.slow
def test_the_unlaundered_read_past_the_table_is_oob(tmp_path):
    """Control: divergent_planners.reads_past_row stores the guard zone's fill, the judge's proof."""
    results = tmp_path / "results.json"
    proc = corpus_run(None, results, "--planner", "tests.planted.divergent_planners:reads_past_row",
                      *(a for c in LAST_ROW_CASES for a in ("--case", c)))
    statuses = {r["id"].split("[")[0]: r["status"] for r in results_of(results)}
    assert proc.returncode != 0 and set(statuses.values()) == {"oob"}, statuses


@pytest.mark.slow
def test_a_read_past_the_table_stored_plus_one_fails_the_run(tmp_path):
    """Caught (was green: no guard-zone fill reached an output, and project rule past-row read
    'differs'): the read lands on a page past the table that the worker maps ``PROT_NONE`` in
    every run (conformance/robustness/guard_pages.py) and faults before anything is stored."""
    code, out, statuses = _run(tmp_path, "launders_the_read_past_the_table", *LAST_ROW_CASES)
    assert code != 0 and statuses == dict.fromkeys(LAST_ROW_CASES, "crash"), \
        (code, statuses, out[-3000:])


# === delta writes against the planner's own memo ==============================================


def test_the_delta_planner_is_wrong_when_the_caller_zeroes_write_offsets():
    """Outside the harness, as upstream's wrapper calls it (``write_offsets`` zeroed before every
    launch): two decode steps whose write offsets are the same [0, 1, 2, 3] leave zeros."""
    from tests.planted.hostile12_planners import delta_writes

    kwargs = _buffers()
    delta_writes(**kwargs, **_requests([1, 2, 3], [4, 6, 2], [1, 1, 1]))
    assert kwargs["out_write_offsets"][:4].tolist() == [0, 1, 2, 3]
    kwargs["out_write_offsets"].zero_()  # the wrapper, before the next launch
    delta_writes(**kwargs, **_requests([1, 2, 3], [5, 7, 3], [1, 1, 1]))
    assert kwargs["out_write_offsets"][:4].tolist() == [0, 0, 0, 0]  # spec: [0, 1, 2, 3]


@pytest.mark.slow
def test_a_planner_writing_deltas_against_its_own_memo_fails_a_multi_step_case(tmp_path):
    """Defended: the plain run zeroes ``write_offsets`` before every step, as upstream's wrapper
    does (conformance/engine/plain.py), so the memo's zero at [0] is the caller's, and the
    elements the planner skipped read 0."""
    code, out, statuses = _run(tmp_path, "delta_writes", select="steps")
    assert statuses.get("steps-same-shape-decodes") in ("fail", "oob"), (statuses, out[-3000:])
    assert code != 0


# === the worker killed after the case =========================================================


@pytest.mark.slow
def test_a_worker_that_segfaults_after_its_last_call_fails_that_case(tmp_path):
    """Defended: the worker's death after its last case's last call, before the next case or
    within the pool's linger at the end (conformance/robustness/worker_process.py), is that
    case's ``crash`` (a teardown error: conformance/plugin/worker_deaths.py)."""
    code, out, statuses = _run(tmp_path, "dies_after_the_case", "steps-same-shape-decodes")
    assert code == 1 and statuses == {"steps-same-shape-decodes": "crash"}, \
        (code, statuses, out[-3000:])
    assert "killed by signal 11 (SIGSEGV) after the case's last call" in out, out[-3000:]
    assert "ERROR at teardown of steps-same-shape-decodes" in out, out[-3000:]
    doc = json.loads((tmp_path / "results.json").read_text())
    assert [r["after_last_call"] for r in doc["results"]] == ["death"]
    assert "crash: the worker died after the case's last call" in out, out[-3000:]


# === a forged reply ahead of the plan =========================================================


@pytest.mark.slow
def test_a_reply_forged_ahead_of_the_plan_fails(tmp_path):
    """Defended: the forged line makes the harness read the outputs before they are written (the
    poison is still there: fail), and the worker's own reply, one behind, is an unknown reply to
    the next request (error)."""
    code, out, statuses = _run(tmp_path, "forges_the_reply_ahead", "steps-capacity-toggle",
                               "steps-same-shape-decodes")
    assert code != 0
    assert set(statuses.values()) == {"fail"}, (statuses, out[-3000:])
    assert "the planner never wrote this element" in out or \
        "the isolation worker sent an unknown reply" in out, out[-3000:]
