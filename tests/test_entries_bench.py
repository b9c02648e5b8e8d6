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
    flat = {(r["variant"], r["label"], r["mode"]): r for r in rows if r["kind"] == "flat"}
    assert set(flat) == {(v, label, m) for v in ew.VARIANTS for m in ("eager", "replay")
                         for label in ("triton", "numba-cuda", "upstream's wrapper")}
    for (variant, label, mode), r in flat.items():
        if label == "upstream's wrapper":  # no sglang on this path
            assert r["status"].startswith("not measured: upstream-wrapper unavailable here "
                                          "(ModuleNotFoundError: No module named 'sglang'")
        elif mode == "eager":
            assert r["status"] == "published" and r["p50_us"] > 0
            assert r["vs_upstream_wrapper"] is None  # upstream's figure is missing
        else:
            assert r["status"] == calls.NO_CUDA_GATED
    printed = md_table(md, "Whole plan in one call: our pipelines and upstream's wrapper, "
                           "eager and replay")
    assert len(printed) == len(flat)


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
                      "--planner", "python", "--no-plan", "--no-flat-plan"])
    doc = json.loads((tmp_path / "entries-bench.json").read_text())
    assert doc["complete"] is False
    assert [(r["kind"], r["bs"]) for r in doc["rows"] if "bs" in r and r["kind"] != "gather"] == \
        [("workload", 1), ("eager", 1)]
    assert "INCOMPLETE" in (tmp_path / "entries-bench.md").read_text().splitlines()[4]


def _flat_step(bs=8, variant="pool"):
    return ew.add_reference(ew.build(bs, variant, CPU)), ew.build(bs, variant, CPU, seed=1)


def test_the_whole_plan_call_reads_and_writes_the_stages_tensors():
    from impls.canary_plan import contract as cc

    w, _ = _flat_step()
    kw, off, ent = calls.flat_plan_kw(w)
    assert sorted(kw) == sorted(cc.ARGUMENT_NAMES)
    assert kw["write_offsets"] is off["out_write_offsets"] and kw["enable"] is off["out_verify_enable"]
    assert kw["verify_slot_indices"] is ent["out_verify_slot_indices"]
    assert kw["req_pool_indices"] is off["req_pool_indices"] is ent["req_pool_indices"]
    assert int(kw["write_offsets"][0]) == ew.POISON  # poisoned until a launcher writes


def test_the_whole_plan_reference_is_the_python_pipelines():
    """The wrapper zeroes write_offsets before the offsets stage (canary-plan spec section 4):
    past [bs + 1] the reference holds zeros, not the poison; the rest is the two stages'."""
    w, _ = _flat_step()
    ref = calls.flat_reference(w)
    assert ref["write_offsets"][:9].tolist() == w.offsets_kw["out_write_offsets"][:9].tolist()
    assert set(ref["write_offsets"][9:].tolist()) == {0}
    assert int(ref["write_num_valid_reqs"][0]) == int(w.offsets_kw["out_write_num_valid_reqs"][0])
    for name in ("verify_slot_indices", "verify_expected_tokens"):
        assert torch.equal(ref[name], w.reference[f"out_{name}"])


def _stages_without_the_wrapper(**kw):
    """Both Python stages on the flat keywords, without the wrapper's zeroing of write_offsets."""
    from impls.canary_plan.pipeline import compose

    write_offsets = kw["write_offsets"]
    before = write_offsets.clone()
    compose(python_offsets, python_entries)(**kw)
    write_offsets[9:] = before[9:]  # what a pipeline that never zeroes leaves there


def test_the_whole_plan_gate_refuses_a_wrong_pipeline_and_passes_ours():
    from impls.canary_plan import get_planner
    from impls.canary_plan.pipeline import compose

    w, _ = _flat_step()
    assert calls.flat_eager(get_planner("triton"), w).median > 0
    with pytest.raises(calls.Refused, match=r"^not published: outputs differ at "
                       r"verify_expected_positions\[0\] \(written region\): .*\(first call\)$"):
        calls.flat_eager(compose(python_offsets, wrong.shifted_position), w)
    with pytest.raises(calls.Refused, match=r"^not published: outputs differ at write_offsets\[9\]: "
                       rf"got {ew.POISON}, reference 0; "):
        calls.flat_eager(_stages_without_the_wrapper, w)


def test_the_whole_plan_replay_path_with_a_stand_in_clock(monkeypatch):
    from impls.canary_plan import get_planner
    from impls.canary_plan.pipeline import compose

    def stand_in(fn, *, after_capture=None, **_):
        fn()
        after_capture()
        fn()
        return timing.summarize([4.0, 5.0, 6.0])

    monkeypatch.setattr(calls, "can_replay", lambda device: True)
    monkeypatch.setattr(timing, "graph_replay_time", stand_in)
    w, previous = _flat_step(8, "swa-lut")
    assert calls.flat_replay(get_planner("python"), w, previous).median == 5.0
    with pytest.raises(calls.Refused, match=r"\(after the replays\)$"):
        calls.flat_replay(compose(python_offsets, wrong.stale_after_refill), w, previous)


def test_the_whole_plan_ratio_is_over_upstreams_wrapper_of_the_same_mode():
    def row(p50, mode, upstream):
        return {"kind": "flat", "p50_us": p50, "mode": mode, "upstream": upstream, "bs": 8,
                "variant": "full", "status": "published"}

    rows = [row(6.0, "replay", False), row(12.0, "replay", True), row(30.0, "eager", False),
            row(None, "eager", True)]
    add_ratios(rows)
    assert [r.get("vs_upstream_wrapper") for r in rows] == [0.5, None, None, None]


def test_upstreams_wrapper_is_not_measured_where_sglang_is_missing():
    with pytest.raises(calls.Refused, match=r"^not measured: upstream-wrapper unavailable here "
                                            r"\(ModuleNotFoundError: No module named 'sglang"):
        calls.resolve_flat("upstream-wrapper")


def _fake_release(root, body: str) -> None:
    """A stand-in sglang package with upstream's module layout: the plan records (dataclasses of
    their fields) and a wrapper ``launch_canary_plan_kernels(*, verify_plan_out, write_plan_out,
    ...)`` whose body is ``body``."""
    from impls.canary_plan.contract import VERIFY_FIELDS, WRITE_FIELDS

    pkg = root / "sglang" / "kernels" / "ops" / "kv_canary"
    (pkg / "plan").mkdir(parents=True)
    for folder in [root / "sglang", *[p for p in pkg.parents if p.is_relative_to(root / "sglang")], pkg,
                   pkg / "plan"]:
        (folder / "__init__.py").write_text("")
    for module, cls, fields in (("verify", "VerifyPlan", VERIFY_FIELDS),
                                ("write", "WritePlan", WRITE_FIELDS)):
        (pkg / f"{module}.py").write_text(
            "from dataclasses import dataclass\nimport torch\n\n@dataclass\nclass "
            f"{cls}:\n" + "".join(f"    {f}: torch.Tensor\n" for f in fields))
    (pkg / "plan" / "api.py").write_text(
        "import dataclasses\nfrom impls.canary_plan import get_planner\n\n"
        "def launch_canary_plan_kernels(*, verify_plan_out, write_plan_out, **kw):\n"
        "    fields = {f.name: getattr(r, f.name) for r in (verify_plan_out, write_plan_out)\n"
        "              for f in dataclasses.fields(r)}\n"
        f"    {body}\n")


@pytest.mark.parametrize(("body", "status"), [
    ("get_planner('python')(**fields, **kw)", None),
    ("get_planner('python')(**fields, **kw); fields['write_num_valid_reqs'] += 1",
     r"^not published: outputs differ at write_num_valid_reqs\[0\]: got \d+, reference \d+"),
])
def test_upstreams_wrapper_is_called_with_its_plan_records_and_gated(tmp_path, monkeypatch, body,
                                                                   status):
    """resolve_flat("upstream-wrapper") builds upstream's VerifyPlan and WritePlan records from
    the flat keywords' very tensors: a wrapper that plans right through them is published, one
    that writes a wrong count is not."""
    import sys

    def forget_sglang():
        for name in [m for m in sys.modules if m == "sglang" or m.startswith("sglang.")]:
            del sys.modules[name]

    _fake_release(tmp_path, body)
    monkeypatch.syspath_prepend(str(tmp_path))
    forget_sglang()
    try:
        w, _ = _flat_step()
        launch = calls.resolve_flat("upstream-wrapper")
        if status is None:
            assert calls.flat_eager(launch, w).median > 0
        else:
            with pytest.raises(calls.Refused, match=status):
                calls.flat_eager(launch, w)
    finally:
        forget_sglang()
