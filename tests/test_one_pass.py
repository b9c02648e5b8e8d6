"""The one-pass candidates (impls/offsets_planner/triton_one_pass.py, impls/offsets_planner/numba_one_pass.py) on the CPU stand-ins
(Triton's interpreter, Numba's simulator): corpus cases judged as a conformance run judges them,
random plans at the bs edges byte for byte against the pure-Python planner, the look-back
workspace's state after launches, and the sweep's dry run (impls/offsets_planner/harness/sweeps/one_pass.py),
including a planted wrong and a planted raising candidate.
"""

from __future__ import annotations

import json

import pytest
import torch

from conformance.corpus.loader import load_corpus
from conformance.engine.runner import Target, run_case
from impls.offsets_planner import numba_one_pass as nop
from impls.offsets_planner import python_planner
from impls.offsets_planner import triton_one_pass as top
from tests.planted import wrong_planners
from tests.test_triton_planner import assert_same, expected, on, random_case

pytestmark = [pytest.mark.slow,  # candidates, not the default planners: about 20 s on 2 cores
              pytest.mark.skipif(top.MODE != "interpreter" or not nop.SIMULATED,
                                reason="CPU stand-ins only (the GPU figures come from the sweep)")]
CPU = torch.device("cpu")

# (framework, design, config): every design of both, with configs that give several programs
# from small bs on (the simulator always runs 32 threads a block).
CANDIDATES = [
    ("triton", "single", {}), ("triton", "single", {"split": 32}),
    ("triton", "blocked", {"tile": 128}), ("triton", "lookback", {"tile": 128}),
    ("triton", "lookback-pid", {"tile": 128}),
    ("triton", "blocked-unrolled", {"tile": 128}), ("triton", "lookback-packed", {"tile": 128}),
    ("triton", "roles", {"tile": 32}), ("triton", "roles", {"scans": 2, "split": 32}),
    ("triton", "roles-lookback", {"tile": 32, "scan_tile": 128}),
    ("triton", "roles-lookback", {"scan_tile": 64, "slow_carry": True}),
    ("triton", "roles-lookback", {"tile": 32, "scan_tile": 64, "joined": True}),
    ("triton", "roles-lookback", {"tile": 32, "scan_tile": 64, "joined": True,
                                  "early_poll": True}),
    ("triton", "roles-lookback", {"tile": 32, "scan_tile": 64, "joined": True,
                                  "early_poll": True, "epoch_load": True}),
    ("numba", "single", {}), ("numba", "blocked", {"chunk": 512}),
    ("numba", "lookback", {"chunk": 512}), ("numba", "lookback-pid", {"chunk": 512}),
    ("numba", "lookback-packed", {"chunk": 512}), ("numba", "roles", {"scans": 2}),
    ("numba", "roles-lookback", {"chunk": 256}),
    ("numba", "roles-lookback", {"chunk": 64, "slow_carry": True}),
    ("numba", "roles-lookback", {"chunk": 96, "fixed_chunk": True}),
    ("numba", "warp-lookback", {"chunk": 256}),
    ("numba", "warp-lookback", {"chunk": 128, "slow_carry": True}),
    ("numba", "warp-lookback", {"chunk": 256, "joint_repoll": True}),  # early_publish: shuffles only
    ("numba", "warp-lookback", {"chunk": 256, "joint_repoll": True, "epoch_load": True}),
]
IDS = [f"{f}-{d}-{'-'.join(f'{k}{v}' for k, v in c.items()) or 'default'}"
       for f, d, c in CANDIDATES]
SIMULATED_SLOW = pytest.mark.slow
"""The Numba candidates, in the simulator: 3-7 s each a test on 2 cores; candidates, not the
default planners (``pytest -m slow`` runs them; the default run keeps the Triton designs)."""
PARAMS = [pytest.param(*c, id=i, marks=SIMULATED_SLOW if c[0] == "numba" else ())
          for c, i in zip(CANDIDATES, IDS)]


def plan(framework: str, design: str, config: dict, kw: dict) -> dict:
    """Run one candidate on a copy of ``kw``; the copy."""
    dev = on(kw, "cpu")
    module = top if framework == "triton" else nop
    module.plan_launch(design=design, **config, **dev)
    return dev


def _subset():
    """The first corpus case of each tag among those that reach a kernel (no documented error),
    and the first documented error: the errors are the shared validator's, the same for every
    candidate. (The whole corpus: ``pytest conformance/ --planner impls.offsets_planner.triton_one_pass:launch_lookback``.)"""
    cases, errors = load_corpus()
    assert not errors and len(cases) > 100
    chosen: dict[str, object] = {}
    for case in cases:
        if "documented-error" in case.tags:
            chosen.setdefault("documented-error", case)
            continue
        for tag in case.tags:
            chosen.setdefault(tag, case)
    return list({c.id: c for c in chosen.values()}.values())


@pytest.mark.parametrize(("framework", "design", "config"), PARAMS)
def test_corpus_subset_passes(framework, design, config):
    module = top if framework == "triton" else nop
    cases = _subset()
    if framework == "numba":  # the simulator is slow: large batches are in the bs edges test
        cases = [c for c in cases if not c.id.startswith("random-")
                 and {"hazard", "steps"} & set(c.tags)]
    launch = module.launcher(design, **config)
    for case in cases:
        run_case(case, Target(f"{framework}-one-pass-{design}", launch, CPU))  # raises on a failure


def whole_corpus_passes(framework: str, design: str, config: dict) -> None:
    """Every corpus case on one candidate, judged as a conformance run judges it (raises on a
    failure): tests/test_one_pass_whole_corpus.py's, marked ``long``."""
    module = top if framework == "triton" else nop
    launch = module.launcher(design, **config)
    cases, errors = load_corpus()
    assert not errors
    for case in cases:
        run_case(case, Target(f"{framework}-one-pass-{design}", launch, CPU))



EDGES = (0, 1, 31, 32, 33, 511, 512, 513, 4095, 4096)
SCENARIOS = ("plain", "swa", "hazard")
LARGE = {"tile": 1024, "chunk": 1024}
"""Tiles at bs 4095 and 4096 (interpreter and simulator cost grows with programs x lanes)."""


@pytest.mark.parametrize(("framework", "design", "config"), PARAMS)
def test_bs_edges_match_python(framework, design, config):
    for i, bs in enumerate(EDGES):
        if framework == "numba" and bs == 4095 and design != "lookback":
            continue  # the simulator is slow: bs 4096 once per framework and design
        if framework == "numba" and bs >= 4095 and design.startswith("roles"):
            continue  # 128 seed blocks of 32 simulated threads: minutes; the GPU sweep checks 4096
        scenario = SCENARIOS[i % 3]
        kw = random_case(bs, i, scenario)
        big = {k: LARGE[k] for k in config if k in LARGE} if bs >= 4095 else {}
        assert_same(plan(framework, design, {**config, **big}, kw), expected(kw), kw)


def test_numba_pre_poll_matches_python_at_small_batches():
    """The ``warp-lookback`` candidate with its first polls sent before the warp's scan
    (``pre_poll``, off in the planner: slower on an H100, reports/gpu/2026-12-05-d/), with and
    without joint re-polls, on 64-request chunks (several scan blocks from bs 65 on)."""
    for config in ({"chunk": 64, "joint_repoll": True, "pre_poll": True},
                   {"chunk": 64, "pre_poll": True}):
        for i, bs in enumerate((0, 1, 64, 65, 200, 300)):
            kw = random_case(bs, i, SCENARIOS[i % 3])
            assert_same(plan("numba", "warp-lookback", config, kw), expected(kw), kw)


@pytest.mark.parametrize("design", ["lookback", "lookback-pid"])
@pytest.mark.parametrize("framework", ["triton", "numba"])
def test_lookback_workspace_resets_itself(framework, design):
    """Word 0 is epoch << 16 | tickets: after each multi-program launch the count is back to 0 and
    the epoch one further; a one-program launch leaves it alone."""
    module = top if framework == "triton" else nop
    config = {"tile": 128} if framework == "triton" else {"chunk": 256}
    ws = module.workspace(CPU)
    before = int(ws[0])
    assert before & 0xFFFF == 0
    for k, bs in enumerate((300, 5, 513)):
        kw = random_case(bs, k, "swa")
        assert_same(plan(framework, design, config, kw), expected(kw), kw)
    assert int(ws[0]) == before + 2 * 65536  # bs 5 is one program: no ticket


def test_configs_refused():
    with pytest.raises(ValueError, match="design"):
        top.config_for("scan", 8, None, None, 0)
    with pytest.raises(ValueError, match="tile=48"):
        top.config_for("blocked", 8, 48, None, 0)
    with pytest.raises(ValueError, match="split=3"):
        top.config_for("single", 64, None, None, 3)
    assert top.config_for("single", 4096, None, None, 0) == (4096, 4096, 16, 1)
    assert top.config_for("lookback", 4096, 128, 4, 0) == (4096, 128, 4, 32)
    with pytest.raises(ValueError, match="design"):
        nop.launch_shape("scan", 8, None, None)
    with pytest.raises(ValueError, match="blocks exceed"):
        nop.launch_shape("blocked", 4096, None, 16)
    assert nop.launch_shape("single", 4096, None, None) == (1, 32, 4096, 128)


def test_default_planner_designs():
    """The Triton planner's default launch is a design of these candidates, by bucket
    (``triton_planner.DESIGNS``): ``roles`` up to bs 512, ``roles-lookback`` above (a default
    launch at bs 600 advances that design's epoch by one and is exact); CONFIG's kernel stays for
    explicit configurations; the Numba planner's default takes ``roles`` up to bs 1024 and
    ``warp-lookback`` (one-warp blocks, 128-request scan chunks) above
    (``numba_cuda_planner.DESIGNS``)."""
    from impls.offsets_planner import numba_cuda_planner, triton_planner
    from impls.offsets_planner import triton_roles_lookback as trl

    assert triton_planner.CONFIG[4096] == (512, 16)
    assert {d[0] for d in triton_planner.DESIGNS.values()} == {"roles", "roles-lookback"}
    assert [triton_planner.DESIGNS[b][0] for b in triton_planner.BLOCKS] == [
        "roles", "roles", "roles", "roles-lookback", "roles-lookback"]
    ws = trl.workspace(CPU)
    before = int(ws[0])
    kw = random_case(600, 91, "hazard")
    dev = on(kw, "cpu")
    triton_planner.launch(**dev)
    assert_same(dev, expected(kw), kw)
    assert int(ws[0]) == before + (1 << 16)
    assert numba_cuda_planner.GPU_THREADS == 512
    assert [(top, d[0]) for top, d in numba_cuda_planner.DESIGNS] == [
        (64, "roles"), (1024, "roles"), (4096, "warp-lookback")]
    assert numba_cuda_planner.DESIGNS[-1][1][2] == 128


@pytest.mark.slow  # both frameworks' candidates in the stand-ins: about 9 s on 2 cores
def test_sweep_dry_run(tmp_path, monkeypatch, capsys):
    from impls.offsets_planner.harness.sweeps import one_pass

    assert one_pass.main(["--dry-run", "--out", str(tmp_path)]) == 0
    report = (tmp_path / "one_pass.md").read_text()
    assert "gpu=none (CPU only)" in report and "dry run" in report
    rows = [line for line in report.splitlines() if "| one-pass" in line]
    designs = ({("triton", d) for d in top.DESIGNS}
               | {("numba-cuda", d) for d in nop.DESIGNS})
    assert {(r.split("|")[1].strip(), r.split("|")[3].strip()[len("one-pass "):])
            for r in rows} == designs
    assert all(r.split("|")[8].strip() == "same" for r in rows), rows
    assert report.count("| chain floor") >= 4 and report.count("| current planner") == 4


def test_sweep_marks_wrong_and_failed_candidates(tmp_path, monkeypatch):
    from impls.offsets_planner.harness.sweeps import one_pass

    def raising(**kw):
        raise RuntimeError("planted: no kernel")

    planted = [("one-pass planted", "off by one", lambda kw: lambda: wrong_planners.off_by_one_scan(**kw)),
               ("one-pass planted", "seed past bs", lambda kw: lambda: wrong_planners.writes_seed_past_bs(**kw)),
               ("one-pass planted", "raises", lambda kw: lambda: raising(**kw))]
    monkeypatch.setattr(one_pass, "candidates", lambda framework, bs, dry_run: planted)
    rc = one_pass.main(["--dry-run", "--out", str(tmp_path), "--bs", "64",
                        "--framework", "triton", "--json", str(tmp_path / "rows.json")])
    assert rc == 1  # a candidate that raised
    data = json.loads((tmp_path / "rows.json").read_text())  # the same rows, as data
    assert [(r["framework"], r["bs"], r["config"], r["check"][:5]) for r in data
            if r["kernel"] == "one-pass planted"] == [
        ("triton", 64, "off by one", "WRONG"), ("triton", 64, "seed past bs", "WRONG"),
        ("triton", 64, "raises", "FAILE")]
    assert [r["kernel"] for r in data][-4:-3] == ["current planner"]
    assert all(r["p50"] is None and r["ratio"] is None for r in data)  # a dry run times nothing
    rows = {line.split("|")[4].strip(): line.split("|")[8].strip()
            for line in (tmp_path / "one_pass.md").read_text().splitlines()
            if "| one-pass planted" in line}
    assert rows["off by one"].startswith("WRONG: out_write_offsets[")
    assert rows["seed past bs"].startswith("WRONG: out_write_seed_slot_indices[64]")
    assert rows["raises"] == "FAILED: RuntimeError: planted: no kernel"
    group = [{"kernel": "one-pass planted", "check": "WRONG: x", "p50": 0.1},
             {"kernel": "one-pass x", "check": "same", "p50": 2.0}]
    assert one_pass.best_candidate(group)["p50"] == 2.0  # a wrong one is never chosen


def test_sweep_only_keeps_the_candidates_whose_config_holds_every_text(tmp_path, monkeypatch):
    """``--only TEXT`` (repeatable) keeps a candidate only when its config text holds every TEXT;
    the floors and the current planner always run."""
    from impls.offsets_planner.harness.sweeps import one_pass

    seen = []

    def make(config):
        def build(kw):
            seen.append(config)
            return lambda: python_planner.launch(**kw)
        return build

    configs = ["tile 32, num_warps 4", "tile 32, num_warps 8", "tile 256, num_warps 8"]
    monkeypatch.setattr(one_pass, "candidates", lambda framework, bs, dry_run: [
        ("one-pass planted", c, make(c)) for c in configs])
    rc = one_pass.main(["--dry-run", "--out", str(tmp_path), "--bs", "1", "--framework", "triton",
                        "--only", "num_warps 8", "--only", "tile 32"])
    assert rc == 0
    rows = [line for line in (tmp_path / "one_pass.md").read_text().splitlines()
            if "| one-pass planted" in line]
    assert [line.split("|")[4].strip() for line in rows] == ["tile 32, num_warps 8"]
    assert set(seen) == {"tile 32, num_warps 8"}
    assert "| current planner" in (tmp_path / "one_pass.md").read_text()


def test_triton_candidates_compile_for_sm90():
    """The compiled path (not the interpreter's) accepts every kernel variant, the packed look-back
    kernel's too: a child compiles them for sm_90 with Triton's bundled ptxas
    (tests/one_pass_sm90.py)."""
    import os
    import subprocess
    import sys

    from conformance.paths import REPO_ROOT

    env = {**os.environ, "TRITON_INTERPRET": "0"}
    out = subprocess.run([sys.executable, "-m", "tests.one_pass_sm90"], cwd=REPO_ROOT, env=env,
                         capture_output=True, text=True, timeout=300)
    lines = [line for line in out.stdout.splitlines() if ": " in line]
    # 8 one-pass, 2 packed, 4 roles and 8 roles-lookback configs (2 of them EPOCH_LOAD); the
    # module is not imported here: it turns the interpreter off in the process that imports it
    assert out.returncode == 0 and len(lines) == 22, out.stdout + out.stderr[-2000:]
    assert all(": ok, " in line for line in lines), out.stdout


def test_sweep_timed_path_with_a_stand_in_clock(monkeypatch):
    """The GPU path of the sweep (timing, floor choice, ratios, the check after the replays, the
    summary's goal) on the CPU, with graph replays replaced by three plain calls and times drawn
    from a fixed sequence."""
    from conformance.bench import timing
    from impls.offsets_planner.harness.sweeps import one_pass

    times = iter([3.0, 2.2, 2.0, 2.5, 9.0, 2.4, 2.7, 2.1, 2.3, 2.6, 2.8])

    def stand_in(fn, **_):
        for _ in range(3):
            fn()
        return timing.summarize([next(times)])

    monkeypatch.setattr(timing, "graph_replay_time", stand_in)
    rows = one_pass.sweep_one("triton", 64, CPU, dry_run=False, deadline=float("inf"),
                              designs=["single", "blocked", "lookback", "lookback-pid",
                                       "lookback-packed", "blocked-unrolled"])
    assert [(r["kernel"], r["config"]) for r in rows] == [
        ("chain floor", "BLOCK 32, 1 warps"), ("chain floor", "BLOCK 64, 1 warps"),
        ("chain floor", "BLOCK 64, 2 warps"),
        ("current planner", "default"), ("one-pass single", "num_warps 1"),
        ("one-pass single", "num_warps 2"), ("one-pass blocked", "tile 32, num_warps 1"),
        ("one-pass lookback", "tile 32, num_warps 1"),
        ("one-pass lookback-pid", "tile 32, num_warps 1"),
        ("one-pass lookback-packed", "tile 32, num_warps 1"),
        ("one-pass blocked-unrolled", "tile 32, num_warps 1")]
    assert [r.get("floor") for r in rows[:3]] == [False, False, True]  # the fastest shape
    assert [r["p50"] for r in rows] == [3.0, 2.2, 2.0, 2.5, 9.0, 2.4, 2.7, 2.1, 2.3, 2.6, 2.8]
    assert [round(r["ratio"], 3) for r in rows] == [1.5, 1.1, 1.0, 1.25, 4.5, 1.2, 1.35, 1.05, 1.15,
                                                     1.3, 1.4]
    assert all(r["check"] == "same" for r in rows[4:])
    best = one_pass.best_candidate(rows)
    assert (best["kernel"], best["p50"]) == ("one-pass lookback", 2.1)
    summary = one_pass.summary(rows)
    line = next(x for x in summary.splitlines() if "| triton" in x)
    assert [c.strip() for c in line.split("|")[1:-1]] == [
        "triton", "64", "2.00 (BLOCK 64, 2 warps)", "2.50",
        "one-pass lookback [tile 32, num_warps 1]", "2.10", "1.05x", "met"]


def _packed_layout(framework: str):
    """(workspace, ticket word, first word of set 0, words per set) of ``lookback-packed``."""
    if framework == "triton":
        from impls.offsets_planner import triton_packed_lookback as tpl

        return tpl.workspace(CPU), 0, tpl.SETS_AT, tpl.MAX_TILES * tpl.WORDS_PER_TILE
    from impls.offsets_planner import numba_one_pass_layout as nk

    return nop.workspace(CPU), nk.PACKED, nk.PACKED + 8, nk.SET_WORDS


@pytest.mark.parametrize("framework", ["triton", "numba"])
def test_packed_lookback_double_buffers(framework):
    """After each multi-program ``lookback-packed`` launch: the epoch is one further and the count
    0; the set it used holds, per tile, READY | the low and high 32 bits of its verify and write
    totals (taken from the pure-Python planner's offsets); the other set, the next launch's, is all
    zeros, also where an earlier, wider launch had written. A one-program launch leaves all alone."""
    config = {"tile": 128} if framework == "triton" else {"chunk": 256}
    tile = 128 if framework == "triton" else 256
    ws, ticket, sets, words = _packed_layout(framework)
    for k, bs in enumerate((1000, 300, 5, 777)):
        before = ws.clone()
        kw = random_case(bs, k + 40, "hazard" if k % 2 else "swa")
        want = expected(kw)
        assert_same(plan(framework, "lookback-packed", config, kw), want, kw)
        if bs <= tile:
            assert torch.equal(ws, before)
            continue
        epoch = int(before[ticket]) >> 16
        assert int(ws[ticket]) == (epoch + 1) << 16
        used = sets + (epoch & 1) * words
        other = sets + ((epoch + 1) & 1) * words
        assert not ws[other:other + words].any()
        ntiles = -(-bs // tile)
        for j in range(ntiles):
            lo, hi = j * tile, min(bs, (j + 1) * tile)
            for i, name in enumerate(("out_verify_offsets_scratch", "out_write_offsets")):
                total = int(want[name][hi]) - int(want[name][lo])
                got = [int(x) for x in ws[used + 4 * j + 2 * i:used + 4 * j + 2 * i + 2]]
                assert got == [(1 << 32) | (total & 0xFFFFFFFF),
                               (1 << 32) | ((total >> 32) & 0xFFFFFFFF)], (j, name)


def _roles_lookback_layout(framework: str):
    """(workspace, first word of set 0, words per set) of ``roles-lookback``."""
    if framework == "triton":
        from impls.offsets_planner import triton_roles_lookback as trl

        return trl.workspace(CPU), trl.SETS_AT, trl.MAX_SCAN_PROGRAMS * 4
    from impls.offsets_planner import numba_roles_lookback_kernel as nrl

    return nop.workspace(CPU, "roles-lookback"), nrl.SETS_AT, nrl.SET_WORDS


@pytest.mark.parametrize(("framework", "design", "epoch_load"),
                         [("triton", "roles-lookback", False), ("triton", "roles-lookback", True),
                          ("numba", "roles-lookback", False), ("numba", "warp-lookback", False),
                          ("numba", "warp-lookback", True)])
def test_roles_lookback_double_buffers(framework, design, epoch_load):
    """After each ``roles-lookback`` (or ``warp-lookback``, same workspace) launch the epoch (word
    0 >> 16) is one further and the ticket
    count 0; the set it used holds, per scan tile, READY | the low and high 32 bits of its verify
    and write totals (from the pure-Python planner's offsets); the other set, the next launch's,
    is all zeros, also where an earlier, wider launch had written. ``epoch_load``: the epoch read
    by a load, the ticket drawn last: the same workspace after every launch."""
    config = {"scan_tile": 128} if framework == "triton" else {"chunk": 128}
    if epoch_load:
        config["epoch_load"] = True
    ws, sets, words = _roles_lookback_layout(framework)
    for k, bs in enumerate((1000, 300, 5, 777)):
        epoch = int(ws[0]) >> 16
        assert int(ws[0]) & 0xFFFF == 0
        kw = random_case(bs, k + 60, "hazard" if k % 2 else "swa")
        want = expected(kw)
        assert_same(plan(framework, design, config, kw), want, kw)
        assert int(ws[0]) == (epoch + 1) << 16
        used, other = sets + (epoch & 1) * words, sets + ((epoch + 1) & 1) * words
        assert not ws[other:other + words].any()
        for j in range(-(-bs // 128)):
            lo, hi = j * 128, min(bs, (j + 1) * 128)
            for i, name in enumerate(("out_verify_offsets_scratch", "out_write_offsets")):
                total = int(want[name][hi]) - int(want[name][lo])
                got = [int(x) for x in ws[used + 4 * j + 2 * i:used + 4 * j + 2 * i + 2]]
                assert got == [(1 << 32) | (total & 0xFFFFFFFF),
                               (1 << 32) | ((total >> 32) & 0xFFFFFFFF)], (j, name)


@pytest.mark.parametrize("framework", ["triton", "numba"])
def test_roles_lookback_stale_words(framework):
    """A workspace whose current set holds READY words of some other launch (what a launch killed
    midway, or a second stream sharing it, would leave): ``slow_carry`` (the path a scan program
    takes when an earlier tile never shows) computes its carry from the request vectors and is
    exact whatever the workspace holds, and it leaves the workspace valid for the next launch.
    (The polling path would read such words on a GPU; the stand-ins run programs in order, so each
    earlier tile has overwritten its words before a later one reads them.)"""
    config = {"scan_tile": 128} if framework == "triton" else {"chunk": 128}
    ws, sets, words = _roles_lookback_layout(framework)
    kw = random_case(700, 77, "swa")
    want = expected(kw)
    used = sets + ((int(ws[0]) >> 16) & 1) * words
    ws[used:used + words] = (1 << 32) | 12345
    assert_same(plan(framework, "roles-lookback", {**config, "slow_carry": True}, kw), want, kw)
    other = sets + ((int(ws[0]) >> 16) & 1) * words  # the next launch's set: zeroed by this one
    assert other != used and not ws[other:other + words].any()
    assert_same(plan(framework, "roles-lookback", config, kw), want, kw)


@pytest.fixture
def last_program_first(monkeypatch):
    """Triton's interpreter running a grid's programs last to first (a schedule a GPU may give):
    every look-back poll of an earlier tile then finds it not yet published."""
    import triton.runtime.interpreter as interpreter

    builder = interpreter.InterpreterBuilder
    forward = builder.set_grid_idx
    monkeypatch.setattr(builder, "set_grid_idx",
                        lambda self, x, y, z: forward(self, self.grid_dim[0] - 1 - x, y, z))


@pytest.mark.parametrize("epoch_load", [False, True])
def test_roles_lookback_fallback_when_earlier_tiles_never_show(last_program_first, epoch_load):
    """Programs last to first: every scan program's polls time out and it takes the fallback (the
    carry from the request vectors): exact, launch after launch, and the workspace stays valid
    (epoch one further a launch, count 0). (A ticket count thrown off, by two launches that
    overlap on two streams or one killed midway, is not healed: later launches may then read an
    earlier launch's words, hence the one-stream rule and ``reset_workspace``.)"""
    from impls.offsets_planner import triton_roles_lookback as trl

    ws = trl.workspace(CPU)
    for k in range(3):
        epoch = int(ws[0]) >> 16
        kw = random_case(500 - 100 * (k % 2), 130 + k, "swa")
        assert_same(plan("triton", "roles-lookback", {"tile": 32, "scan_tile": 128,
                                                      "epoch_load": epoch_load}, kw),
                    expected(kw), kw)
        assert int(ws[0]) == (epoch + 1) << 16


def test_every_candidate_has_a_whole_corpus_test():
    """tests/test_one_pass_whole_corpus.py runs every candidate on the whole corpus, marked
    ``long`` (not ``slow``)."""
    from tests import test_one_pass_whole_corpus as whole

    assert [m.name for m in whole.pytestmark] == ["long"]
    [mark] = [m for m in whole.test_whole_corpus_passes.pytestmark if m.name == "parametrize"]
    assert mark.args[1] == CANDIDATES and mark.kwargs["ids"] == IDS
