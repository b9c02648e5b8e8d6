"""The entries planner's benchmark sweep (impls/entries_planner/harness/entries.py) on the CPU: its
workload, the correctness gate (planted wrong planners of tests/planted/wrong_entries_planners.py
get no figure), the refill-then-replay path with a stand-in clock, the ratios, and one end-to-end
run under Triton's interpreter and Numba's simulator.
"""

from __future__ import annotations

import json

import pytest
import torch

from impls.entries_planner.harness import entries_workload as ew
from conformance.bench import gather_floor as gf
from conformance.bench import timing
from impls.entries_planner.harness import entries_calls as calls
from impls.entries_planner.harness.entries_report import add_ratios
from impls.entries_planner import contract as ec
from impls.entries_planner.python_planner import launch as python_entries
from impls.offsets_planner.python_planner import launch as python_offsets
from tests.planted import wrong_entries_planners as wrong

CPU = torch.device("cpu")
PLANTED = "tests.planted.wrong_entries_planners:shifted_position"
POOL_NAMES = (*ew.ENTRIES_REQUEST_NAMES, *ew.PLAN_NAMES)


def test_gpu_steps_fit_the_kv_pool_and_look_like_serving():
    p = ew.GPU
    for bs in (64, 512, 4096):
        rpi, prefix, extend, valid = ew.request_vectors(bs, p, seed=0)
        live = rpi != 0
        assert len(set(rpi[live].tolist())) == int(live.sum())  # distinct rows
        assert 0.05 < float((~live).float().mean()) < 0.25  # about one row in eight padding
        assert int(prefix[live].sum()) <= p.kv_pool_tokens
        assert bool((valid <= prefix).all()) and bool((extend >= 1).all())
    _, prefix, _, _ = ew.request_vectors(512, p, seed=0)
    assert 300 < int(prefix.median()) < 1500  # a few hundred to a few thousand tokens
    rpi, prefix, _, _ = ew.request_vectors(4096, p, seed=0)
    assert int(prefix[rpi != 0].sum()) > p.kv_pool_tokens // 2  # scaled down to about the pool


def test_build_plans_the_step_with_the_python_offsets_planner():
    w = ew.build(8, "swa-lut", CPU, seed=0)
    rpi, prefix = w.entries_kw[ew.RPI].tolist(), w.entries_kw[ew.PREFIX].tolist()
    lengths = [min(p, ew.CPU.window) if r else 0 for r, p in zip(rpi, prefix)]
    scratch = w.entries_kw[ec.SCRATCH_NAME][:9].tolist()
    assert scratch == [sum(lengths[:i]) for i in range(9)]
    assert w.total == sum(lengths) and int(w.entries_kw[ec.ENABLE_NAME][0]) == 1
    assert w.facts["padding rows"] == rpi.count(0) and w.facts["total entries"] == w.total


def test_refill_gives_the_step_the_python_planners_plan():
    """The replay path's tensors on the CPU: planned on another step, refilled in place, planned
    again: the outputs are this step's reference, tail poisoned, for one stage and for both."""
    w, previous = ew.add_reference(ew.build(8, "pool", CPU)), ew.build(8, "pool", CPU, seed=1)
    kw = ew.fresh_entries_kw(w, contents=previous)
    python_entries(**kw)
    assert calls.first_difference({n: kw[n] for n in ec.OUTPUT_NAMES}, w.reference) is not None
    ew.refill(kw, w, POOL_NAMES)
    assert bool((kw[ec.OUTPUT_NAMES[0]] == ew.POISON).all())
    python_entries(**kw)
    assert all(calls.first_difference(got, want, t) is None for got, want, t in
               calls.entries_checks(kw, w))
    off, ent = ew.fresh_plan_kw(w, contents=previous)
    python_offsets(**off)
    python_entries(**ent)
    ew.refill({**off, **ent}, w, (ew.RPI, ew.PREFIX, ew.EXTEND, ec.VALID_LENS_NAME), offsets=off)
    python_offsets(**off)
    python_entries(**ent)
    assert [calls.first_difference(*c) for c in calls.plan_checks(off, ent, w)] == [None, None]


def test_first_difference_names_the_element_and_its_region():
    want = {"out": torch.tensor([1, 2, 3, -5, -5])}
    assert calls.first_difference({"out": torch.tensor([1, 9, 3, -5, -5])}, want, 3) == \
        "out[1] (written region): got 9, reference 2; 1 element(s) differ"
    assert calls.first_difference({"out": torch.tensor([1, 2, 3, -5, 0])}, want, 3) == \
        "out[4] (tail): got 0, reference -5; 1 element(s) differ"
    assert calls.first_difference({"out": want["out"].clone()}, want, 3) is None


@pytest.mark.parametrize("planner, status", [
    (wrong.shifted_position, "not published: outputs differ at out_verify_expected_positions[0] "
                             "(written region): got 1, reference 0; 1 element(s) differ "
                             "(first call)"),
    (wrong.writes_tail, "not published: outputs differ at out_verify_slot_indices[{T}] (tail): "
                        "got 0, reference -12345; 1 element(s) differ (first call)"),
    (wrong.right_once, "not published: outputs differ at out_verify_prev_slot_indices[0] "
                       "(written region): got 123, reference -1; 1 element(s) differ "
                       "(after the timed calls)"),
])
def test_gate_refuses_planted_planners(planner, status):
    w = ew.add_reference(ew.build(1, "full", CPU))
    assert int(w.reference[ec.OUTPUT_NAMES[2]][0]) == 0  # entry 0 is position 0 of request 0
    with pytest.raises(calls.Refused) as refused:
        calls.eager(planner, w)
    assert str(refused.value) == status.format(T=w.total)
    assert calls.eager(python_entries, w).median > 0  # the reference itself passes


def test_replay_path_with_a_stand_in_clock(monkeypatch):
    """The GPU path on the CPU: capture (here: two calls) on another step, refill, replays (two
    calls), the check after them; a planner that ignores refilled inputs is refused there."""
    seen = []

    def stand_in(fn, *, after_capture=None, **_):
        fn(), fn()
        after_capture()
        fn(), fn()
        seen.append(1)
        return timing.summarize([2.5, 3.0, 3.5])

    monkeypatch.setattr(calls, "can_replay", lambda device: True)
    monkeypatch.setattr(timing, "graph_replay_time", stand_in)
    w, previous = ew.add_reference(ew.build(8, "swa-lut", CPU)), ew.build(8, "swa-lut", CPU, 1)
    assert calls.replay(calls.resolve("triton", "entries"), w, previous).median == 3.0
    with pytest.raises(calls.Refused, match=r"^not published: outputs differ at "
                                            r"out_verify_slot_indices\[0\] .*\(after the replays\)$"):
        calls.replay(wrong.stale_after_refill, w, previous)
    stats = calls.plan_replay(calls.resolve("triton", "offsets"), python_entries, w, previous)
    assert stats.median == 3.0 and len(seen) == 3


def test_ratios_come_from_the_runs_figures():
    def row(kind, p50, **kw):
        return {"kind": kind, "p50_us": p50, "iqr_us": None, "n": 1, "status": "published", **kw}

    step = {"bs": 64, "variant": "full"}
    rows = [row("floor", 10.0, floor="empty-triton", framework="triton", mode="eager"),
            row("floor", 20.0, floor="empty-numba", framework="numba-cuda", mode="eager"),
            row("floor", 2.0, floor="empty-triton", framework="triton", mode="replay"),
            row("floor", 3.0, floor="empty-numba", framework="numba-cuda", mode="replay"),
            row("gather", 5.0, framework="triton", shape="A", **step),
            row("gather", 4.0, framework="triton", shape="B", **step),
            row("gather", 6.0, framework="numba-cuda", shape="C", **step),
            row("eager", 30.0, planner="triton", **step),
            row("eager", 50.0, planner="numba-cuda", **step),
            row("replay", 8.0, planner="triton", **step),
            row("replay", 12.0, planner="m:f", **step),
            row("replay", None, planner="numba-cuda", **step),
            row("plan", 20.0, entries="triton", upstream_offsets=False, **step),
            row("plan", 40.0, entries="triton", upstream_offsets=True, **step)]
    add_ratios(rows)
    assert [r["best"] for r in rows[4:7]] == [False, True, True]
    assert [rows[7]["vs_empty"], rows[8]["vs_empty"]] == [3.0, 2.5]
    assert (rows[9]["vs_empty"], rows[9]["vs_gather"], rows[9]["gather_shape"]) == \
        (4.0, 2.0, "triton B")
    assert (rows[10]["vs_empty"], rows[10]["vs_gather"]) == (6.0, 3.0)  # the faster framework's
    assert rows[11]["vs_empty"] is None and rows[11]["vs_gather"] is None
    assert rows[12]["vs_upstream_offsets"] == 0.5


def test_gather_floor_keeps_each_requests_run_and_checks_its_outputs():
    scratch = torch.tensor([0, 3, 3, 7, 99])
    g = gf.inputs(scratch, 3, seed=2)
    index = g.index.tolist()
    assert sorted(index) == list(range(7))
    assert index[1:3] == [index[0] + 1, index[0] + 2]  # request 0's run stays contiguous
    assert index[4:7] == [index[3] + 1, index[3] + 2, index[3] + 3]
    assert gf.wrong_output(g) is not None  # outputs still zero
    gf.call("triton", gf.CPU_SHAPES["triton"][0], g)()
    assert gf.wrong_output(g) is None
    g.outputs[2][5] += 1
    assert gf.wrong_output(g).startswith("gather output 2[5] = ")


def md_table(md: str, title: str) -> list[list[str]]:
    """The body cells of the Markdown table under ``## title``."""
    section = md.split(f"## {title}\n", 1)[1].split("\n## ", 1)[0]
    lines = [line for line in section.splitlines() if line.startswith("|")][2:]
    return [[c.strip() for c in line.strip().strip("|").split("|")] for line in lines]


def test_sweep_end_to_end_on_the_cpu(tmp_path):
    from impls.entries_planner.harness import entries

    rc = entries.main(["--out", str(tmp_path), "--bs", "1", "--planner", "triton", "--planner",
                       "numba-cuda", "--planner", "python", "--planner", PLANTED])
    assert rc == 1  # the planted planner's figures were refused
    doc = json.loads((tmp_path / "entries-bench.json").read_text())
    md = (tmp_path / "entries-bench.md").read_text()
    assert md.splitlines()[2].startswith("gpu=none (CPU only), driver=n/a")
    assert doc["fingerprint"]["gpu"] == "none (CPU only)" and doc["complete"] is True
    rows = doc["rows"]
    eager = {(r["variant"], r["label"]): r for r in rows if r["kind"] == "eager"}
    labels = ["triton", "numba-cuda", "python (bs 1 and 8 only)", PLANTED]
    assert set(eager) == {(v, label) for v in ew.VARIANTS for label in labels}
    floor = {r["framework"]: r["p50_us"] for r in rows
             if r["kind"] == "floor" and r["mode"] == "eager"}
    for (variant, label), r in eager.items():
        if label == PLANTED:
            assert r["p50_us"] is None and r["vs_empty"] is None
            assert r["status"].startswith("not published: outputs differ at "
                                          "out_verify_expected_positions[0] (written region)")
            continue
        assert r["status"] == "published" and r["p50_us"] > 0
        assert r["vs_empty"] == (None if label.startswith("python")
                                 else r["p50_us"] / floor[label])
    printed = {(c[0], c[2]): c for c in md_table(md, "Eager: the launch call's host wall time")}
    assert set(printed) == set(eager)
    for key, r in eager.items():
        cells = printed[key]
        if r["p50_us"] is None:
            assert cells[3:6] == ["-", "-", "-"] and cells[6] == f"`{r['status']}`"
        else:
            assert cells[3] == f"{r['p50_us']:.2f}" and cells[6] == "published"
            assert cells[5] == ("-" if r["vs_empty"] is None else f"{r['vs_empty']:.2f}x")
    replay = {(r["variant"], r["label"]): r["status"] for r in rows if r["kind"] == "replay"}
    assert set(replay.values()) == {calls.NO_CUDA_GATED} | {eager[(v, PLANTED)]["status"]
                                                      for v in ew.VARIANTS}
    plans = [(r["offsets_label"], r["entries_label"], r["status"]) for r in rows
             if r["kind"] == "plan" and r["variant"] == "full"]
    assert [p[:2] for p in plans] == [("triton (ours)", "triton"), ("upstream's", "triton"),
                                      ("numba-cuda (ours)", "numba-cuda"),
                                      ("upstream's", "numba-cuda"), ("upstream's", "upstream's")]
    assert plans[0][2] == plans[2][2] == calls.NO_CUDA_GATED
    assert plans[1][2].startswith(f"not measured: {calls.UPSTREAM_OFFSETS} unavailable here")
    assert plans[4][2].startswith("not measured: upstream's entries launcher not given")
    gathers = [r for r in rows if r["kind"] == "gather"]
    assert len(gathers) == 2 * len(ew.VARIANTS)
    assert {r["status"] for r in gathers} == {f"{calls.NO_CUDA} (ran once: outputs checked)"}
    assert "`not published: outputs differ at out_verify_expected_positions[0]" in md


def test_a_stopped_sweep_leaves_the_steps_it_finished(tmp_path, monkeypatch):
    from impls.entries_planner.harness import entries

    real = ew.add_reference

    def stops_at_bs_8(w):
        if w.bs == 8:
            raise KeyboardInterrupt  # as a timeout's signal would stop the run here
        return real(w)

    monkeypatch.setattr(ew, "add_reference", stops_at_bs_8)
    with pytest.raises(KeyboardInterrupt):
        entries.main(["--out", str(tmp_path), "--bs", "1", "--bs", "8", "--variant", "full",
                      "--planner", "python", "--no-plan"])
    doc = json.loads((tmp_path / "entries-bench.json").read_text())
    assert doc["complete"] is False
    assert [(r["kind"], r["bs"]) for r in doc["rows"] if "bs" in r and r["kind"] != "gather"] == \
        [("workload", 1), ("eager", 1)]
    assert "INCOMPLETE" in (tmp_path / "entries-bench.md").read_text().splitlines()[4]
