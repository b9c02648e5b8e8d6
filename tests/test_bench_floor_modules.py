"""A floor's kernel module faked in ``sys.modules`` (conformance/bench/floor_modules.py
``kernel_module``): the bench binds the kernel modules of the floors a run needs at collection,
before any planner is imported, checks that each is the bench's own file, uses only what it bound,
and watches the ``sys.modules`` entry (a replacement refuses every figure after it, as a rebound
clock does). Planted planner: tests/planted/floor_module_attacks.py. Caught: a plain test
asserting the verdict; not caught: a strict xfail whose reason names the hole.

One CPU bench run (eager, reused, bs 8, 2 rounds; the planted planner beside ``triton``, whose
chain floor it fakes); the rest calls the floors in this process.
"""

from __future__ import annotations

import importlib
import json
import sys
import types
from pathlib import Path

import pytest
import torch

from conformance.bench import chain_floors, clocks, floor_modules
from conformance.bench.refusal import refused
from tests.planted import floor_module_attacks as attacks
from tests.test_bench import _planner_benches, _pytest

NUMBA = "conformance.bench.chain_numba"
_ARGS = ("--bench-bs", "8", "--bench-rounds", "2", "--bench-mode", "eager", "--bench-scenario",
         "reused")


@pytest.fixture
def fresh(monkeypatch):
    """The bench's bindings and watch list as before its first bind (the genuine Numba chain
    module imported, its kernels on the watch list), set back afterwards: this process's other
    tests keep theirs."""
    importlib.import_module(NUMBA)
    bound = dict(floor_modules._BOUND)
    floor_modules._BOUND.clear()  # in place: the name itself is watched
    kept = [w for w in clocks._WATCH
            if w[1] is not floor_modules._BOUND and w[1] is not sys.modules]
    monkeypatch.setattr(clocks, "_WATCH", kept)
    yield floor_modules
    floor_modules._BOUND.clear()
    floor_modules._BOUND.update(bound)


def _kw():
    """A bs-8 batch of the bench's own workload (CPU), and the seeds the plan writes for it."""
    from conformance.bench import rejudge, workloads

    kw = workloads.build(8, workloads.spec_for("serving", "cpu", (16, 8), seed=8), "cpu")
    want = rejudge.reference_values(kw, *(kw[n] for n in chain_floors.TABLE_INPUT_NAMES))[2]
    return kw, want


def _seeds(kw) -> list[int]:
    return kw[chain_floors.SEEDS_NAME][:8].tolist()


def test_a_floor_module_put_in_sys_modules_before_the_first_import_is_refused(fresh,
                                                                              monkeypatch):
    """Attack: a module of the planner's own in ``sys.modules['conformance.bench.chain_numba']``
    before the bench imported it (a bare module: not the bench's file). The floor refuses it
    with a reason naming the module and the file it should be, and measures nothing."""
    fake = types.ModuleType(NUMBA)
    calls = []
    fake.chain_kernel = fake.chain_pointer_kernel = type(
        "Slow", (), {"__getitem__": lambda self, config: lambda *a: calls.append(config)})()
    monkeypatch.setitem(sys.modules, NUMBA, fake)
    kw, _ = _kw()
    with pytest.raises(floor_modules.FloorModuleError) as caught:
        chain_floors.chain_call("chain-numba", kw)
    assert str(caught.value) == (
        "floor chain-numba: sys.modules['conformance.bench.chain_numba'] is not the bench's own "
        "conformance/bench/chain_numba.py (its spec names None): a module put there before the "
        "bench imported it; no figure of this floor is measured")
    assert calls == [] and "chain-numba" not in floor_modules._BOUND


def test_a_floor_module_replaced_after_the_bench_bound_it_is_unused_and_seen(fresh, monkeypatch):
    """Attack: the module replaced in ``sys.modules`` once the bench has bound it (as a planner
    resolved after collection does). The floor goes on with the module it bound (the fake is
    never called, the seeds are the plan's) and the replacement is a tampering of its own."""
    genuine = fresh.kernel_module("chain-numba")
    assert genuine is sys.modules[NUMBA] and fresh.bind_kernels(["chain-numba"]) == ["chain-numba"]
    assert clocks.tampered() == []
    fake, calls = types.ModuleType(NUMBA), []
    fake.chain_kernel = fake.chain_pointer_kernel = type(
        "Slow", (), {"__getitem__": lambda self, config: lambda *a: calls.append(config)})()
    monkeypatch.setitem(sys.modules, NUMBA, fake)
    kw, want = _kw()
    chain_floors.chain_call("chain-numba", kw)[1]()
    assert calls == [] and _seeds(kw) == want
    assert clocks.tampered() == ["sys.modules['conformance.bench.chain_numba']"]


def test_the_bound_module_set_to_another_is_seen(fresh, monkeypatch):
    """Attack: the bench's own record of the bound module rewritten in place
    (``floor_modules._BOUND['chain-numba']``): seen as a tampering."""
    fresh.kernel_module("chain-numba")
    monkeypatch.setitem(floor_modules._BOUND, "chain-numba", types.ModuleType(NUMBA))
    assert clocks.tampered() == ["conformance.bench.floor_modules._BOUND['chain-numba']"]


@pytest.mark.xfail(strict=True, reason="a module forged before the bench's first import of it "
                   "(its spec and __file__ naming the bench's own file, its kernels registered "
                   "on the watch list) passes the check: the bench trusts the import of a floor "
                   "module made before any planner code runs (at collection), and only code "
                   "that runs earlier (a conftest, a -p plugin, a .pth file), never the planner "
                   "under test, can plant it (fix: load the floor's file itself, by path, "
                   "whatever sys.modules holds)")
def test_a_floor_module_forged_as_the_bench_file_before_the_first_import_is_refused(
        fresh, monkeypatch):
    from importlib.machinery import ModuleSpec

    fake = types.ModuleType(NUMBA)
    path = str(Path(floor_modules.__file__).with_name("chain_numba.py"))
    fake.__spec__, fake.__file__ = ModuleSpec(NUMBA, None, origin=path), path
    fake.chain_kernel = fake.chain_pointer_kernel = object()
    clocks.watch(fake, "chain_kernel")
    monkeypatch.setitem(sys.modules, NUMBA, fake)
    with pytest.raises(floor_modules.FloorModuleError):
        floor_modules.kernel_module("chain-numba")


def test_every_floor_kernel_module_is_the_bench_file_it_names():
    """No false alarm: each floor's module binds as the bench's own file, and its kernels are
    the ones the floor calls."""
    for name, module in floor_modules.KERNEL_MODULES.items():
        bound = floor_modules.kernel_module(name)
        assert bound is sys.modules[module] and bound.__file__ == str(
            Path(floor_modules.__file__).with_name(module.rpartition(".")[2] + ".py"))
    bound = floor_modules.kernel_module("empty-triton")
    assert floor_modules.empty_triton_kernel() is bound.empty_kernel


@pytest.fixture(scope="module")
def faked_run(tmp_path_factory):
    """(JSON document, pytest's output and exit code, the fake's launch log) of a bench run of
    the planted planner before ``triton``, whose ``chain-triton`` floor it fakes."""
    folder = tmp_path_factory.mktemp("floor")
    out, log = folder / "bench.json", folder / "fake-launches.log"
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv(attacks.LOG_ENV, str(log))
        proc = _pytest("conformance/bench", "--planner", f"{attacks.__name__}:fakes_chain_triton",
                       "--planner", "triton", *_ARGS, f"--benchmark-json={out}")
    assert out.exists(), proc.stdout[-3000:] + proc.stderr[-3000:]
    launches = log.read_text().splitlines() if log.exists() else []
    return json.loads(out.read_text()), proc.stdout + proc.stderr, proc.returncode, launches


def test_a_planner_that_fakes_the_chain_floors_module_gets_every_figure_refused(faked_run):
    """Attack (tests/planted/floor_module_attacks.py ``fakes_chain_triton``): resolved first, the
    planner puts a slower chain-triton module in ``sys.modules`` before the bench imported the
    real one. Fixed here: the bench bound the real module at collection and times it (the fake
    is never launched), and the replacement refuses the planner's figure and every one after."""
    doc, output, code, launches = faked_run
    assert launches == []
    reason = "timer tampered: sys.modules['conformance.bench.chain_triton'] replaced"
    mine = _planner_benches(doc)
    assert {b["params"]["planner"] for b in mine} == {f"{attacks.__name__}:fakes_chain_triton",
                                                       "triton"}
    chains = [b for b in doc["benchmarks"] if b["extra_info"].get("chain")]
    assert [b["params"]["mode"] for b in chains] == ["eager", "launch"]
    for b in doc["benchmarks"]:  # a planner's figure: checked when it resolved; a floor's: after
        when = "when the planner was resolved" if b in mine else "after the bench bound it"
        assert refused(b) == f"{reason} {when}", (b["name"], refused(b))
        assert b["stats"]["median"] is None
    assert code == 1 and f"refused figure: {reason}" in output


def test_the_planted_fake_writes_the_plans_seeds_slower():
    """The planted fake is a floor the bench's own check cannot tell apart: its seeds are the
    plan's (what test_chain_floor compares), only :data:`EXTRA_S` later per launch (called as
    chain_floors.chain_call calls the chain-triton kernel)."""
    import time

    kw, want = _kw()
    rpi, prefix, extend = (kw[n] for n in chain_floors.REQUEST_INPUT_NAMES)
    table, lut = (kw[n] for n in chain_floors.TABLE_INPUT_NAMES)
    lut_len = 0 if lut is None else int(lut.shape[0])
    lut = lut if lut is not None else torch.zeros(1, dtype=torch.int64)
    out = torch.full((8,), -7, dtype=torch.int64)
    start = time.perf_counter()
    attacks.fake_module().chain_kernel[(1,)](
        rpi, prefix, extend, table, lut, out, 8, table.stride(0), table.shape[0], table.shape[1],
        lut_len, BLOCK=512, HAS_LUT=lut_len > 0, num_warps=4)
    assert time.perf_counter() - start >= attacks.EXTRA_S == 0.02
    assert out.tolist() == want
