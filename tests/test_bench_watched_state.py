"""What the bench's watch list covers beyond a module's own names (conformance/bench/clocks.py):
the floor kernels' own state (``watch_state``, registered by each kernel module at its import),
every global of the judge and of the reference planner it re-judges with, with the builtins their
code reads (``watch_globals``, rejudge.py), and the torch callables the judge and the torch-op
floor use. In this process, on the CPU (Triton's interpreter, Numba's simulator): each attack is
named by ``clocks.tampered()`` and undone; an honest launch of every floor changes nothing.
The same attacks through a whole bench run: tests/test_hostile5.py.
"""

from __future__ import annotations

import builtins
import time

import pytest
import torch

from conformance.bench import chain_floors, clocks, floor_modules, floors, rejudge
from conformance.bench.kernel_modes import NUMBA_REBOUND, TRITON_REBOUND
from impls.offsets_planner import python_planner

_FLOORS = ("empty-triton", "empty-numba", "chain-triton", "chain-numba")


@pytest.fixture
def bound():
    """Every floor kernel module bound (as at collection), nothing tampered before the test."""
    for name in _FLOORS:
        floor_modules.kernel_module(name)
    assert clocks.tampered() == []
    return {name: floor_modules.kernel_module(name) for name in _FLOORS}


def _kw():
    from conformance.bench import workloads

    return workloads.build(8, workloads.spec_for("serving", "cpu", (16, 8), seed=8), "cpu")


def test_honest_launches_of_every_floor_change_no_watched_state(bound):
    """No false alarm: every floor launched (the Triton kernels compiled by the interpreter, the
    Numba ones run by the simulator, which stores each launch configuration on the kernel)
    leaves the watch list as bound, and each kernel object's state is watched."""
    cpu = torch.device("cpu")
    for name in ("torch-op", "empty-triton", "empty-numba"):
        eager, _ = floors.floor_call(name, cpu)
        eager()
        eager()
    kw = _kw()
    for name, shape in (("chain-triton", None), ("chain-numba", None),
                        ("chain-numba", (32, chain_floors.POINTERS))):
        chain_floors.chain_call(name, kw, shape)[0]()
    assert kw[chain_floors.SEEDS_NAME][:8].tolist() == rejudge.reference_values(
        kw, *(kw[n] for n in chain_floors.TABLE_INPUT_NAMES))[2]
    assert clocks.tampered() == []
    assert {s.name for s in clocks._STATES} >= {
        "conformance.bench.empty_triton.empty_kernel", "conformance.bench.empty_numba.empty_kernel",
        "conformance.bench.chain_triton.chain_kernel", "conformance.bench.chain_numba.chain_kernel",
        "conformance.bench.chain_numba.chain_pointer_kernel"}


def test_a_pre_run_hook_an_instance_run_and_a_class_method_are_named(bound, monkeypatch):
    """A bound Triton kernel slowed through its state, three ways: a hook in its pre-run list,
    an instance ``run`` shadowing the class's, its class's ``run`` rebound."""
    kernel = bound["chain-triton"].chain_kernel
    name = "conformance.bench.chain_triton.chain_kernel"
    hook = lambda *args, **kwargs: time.sleep(0)  # noqa: E731
    kernel.add_pre_run_hook(hook)
    try:
        assert clocks.tampered() == [f"{name}.pre_run_hooks"]
    finally:
        kernel.pre_run_hooks.remove(hook)
    assert clocks.tampered() == []
    monkeypatch.setattr(kernel, "run", kernel.run, raising=False)  # bound: a new instance name
    assert clocks.tampered() == [f"{name}.run"]
    monkeypatch.undo()
    real = type(kernel).run
    monkeypatch.setattr(type(kernel), "run", lambda self, *a, **k: real(self, *a, **k))
    empty = "conformance.bench.empty_triton.empty_kernel"
    assert sorted(clocks.tampered()) == [f"{name}.__class__.run", f"{empty}.__class__.run"]


def test_a_numba_kernel_replaced_or_given_a_new_class_is_named(bound, monkeypatch):
    """The empty Numba kernel set to another object (a watched name, and its module is the one
    the floor launches from), and a chain kernel given another class."""
    module = bound["empty-numba"]
    assert floor_modules.empty_numba_kernel() is module.empty_kernel
    monkeypatch.setattr(module, "empty_kernel", object())
    assert clocks.tampered() == ["conformance.bench.empty_numba.empty_kernel"]
    monkeypatch.undo()
    kernel = bound["chain-numba"].chain_kernel
    real = type(kernel)
    monkeypatch.setattr(kernel, "__class__", type("Slower", (real,), {}))
    assert clocks.tampered() == ["conformance.bench.chain_numba.chain_kernel.__class__"]


def test_object_state_leaves_out_what_the_framework_rebinds_itself():
    """ObjectState: a name of ``rebound`` may change (Triton's ``hash`` on its first compile, the
    simulator's launch configuration), a new attribute that shadows no class attribute is not
    checked, and every other instance attribute's identity and list items are."""

    class Kernel:
        def run(self):
            return None

    kernel = Kernel()
    kernel.hash, kernel.hooks, kernel.debug = None, [], None
    state = clocks.ObjectState("k", kernel, rebound={"hash"})
    kernel.hash, kernel.compile = "abc", print
    assert state.changed() == []
    kernel.hooks.append(print)
    kernel.debug = True
    kernel.run = print
    assert state.changed() == ["debug", "hooks", "run"]
    assert "hash" in TRITON_REBOUND and "grid_dim" in NUMBA_REBOUND


@pytest.mark.parametrize(("owner", "attr", "named"), [
    (python_planner, "seed_positions", "impls.offsets_planner.python_planner.seed_positions"),
    (python_planner, "finish", "impls.offsets_planner.python_planner.finish"),
    (python_planner, "NO_SEED", "impls.offsets_planner.python_planner.NO_SEED"),
    (python_planner, "min", "impls.offsets_planner.python_planner.min"),  # shadows the builtin
    (builtins, "min", "builtins.min"),
    (rejudge, "OUTPUT_NAMES", "conformance.bench.rejudge.OUTPUT_NAMES"),
    (rejudge, "zip", "conformance.bench.rejudge.zip"),
    (torch.Tensor, "tolist", "torch.Tensor.tolist"),
    (torch.Tensor, "add_", "torch.Tensor.add_"),
])
def test_the_reference_and_the_judge_cannot_be_rebound_unseen(bound, monkeypatch, owner, attr,
                                                             named):
    """A name the judge's reference reaches through its module's globals (or a builtin it reads,
    or one added to shadow it), a constant of the judge, a torch callable it reads outputs with:
    rebound, it is named."""
    real = getattr(owner, attr, None)
    monkeypatch.setattr(owner, attr, lambda *a, **k: real(*a, **k), raising=False)
    assert clocks.tampered() == [named]


def test_the_torch_op_floor_calls_the_add_it_captured(bound, monkeypatch):
    """``torch.Tensor.add_`` rebound after the floors' import: the torch-op floor still adds
    with the real one (the rebinding is never called) and the rebinding is named."""
    calls = []
    real = torch.Tensor.add_
    monkeypatch.setattr(torch.Tensor, "add_", lambda self, *a: calls.append(a) or real(self, *a))
    eager, _ = floors.floor_call("torch-op", torch.device("cpu"))
    assert [eager().item(), eager().item()] == [2.0, 3.0]
    assert calls == [] and clocks.tampered() == ["torch.Tensor.add_"]
