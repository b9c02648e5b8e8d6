"""Bound plans (``impls.offsets_planner.bind``, impls/offsets_planner/bound_plan.py): the buffer set validated once, each step
checked with the same messages and order as spec section 4, outputs byte for byte those of the
unbound planners."""

from __future__ import annotations

import pytest
import torch

import impls.offsets_planner
from impls.offsets_planner import python_planner, triton_planner, validate_cache
from impls.offsets_planner.errors import PlanError
from impls.offsets_planner.registry import availability, get_planner
from impls.offsets_planner.validate import validate_launch
from impls.offsets_planner.buffer_set import STABLE_NAMES
from tests.test_validate_cache import _mutations, expected_error, make_kw, raised, request

from impls.offsets_planner.contract import REQUEST_INPUT_NAMES as REQUEST


def stable(kw: dict) -> dict:
    return {n: kw[n] for n in STABLE_NAMES}


def on(kw: dict, device: str) -> dict:
    """``kw`` with every tensor moved to ``device`` (the planner's: CUDA in gpu mode)."""
    return {n: (v.to(device) if isinstance(v, torch.Tensor) else v) for n, v in kw.items()}


def outputs(kw: dict) -> list[list[int]]:
    return [kw[n].tolist() for n in kw if n.startswith("out_")]


def fresh_outputs(kw: dict) -> dict:
    return {**kw, **{n: torch.full_like(kw[n], -5) for n in kw if n.startswith("out_")}}


@pytest.mark.parametrize("planner", ["python", "triton", "numba-cuda"])
def test_bound_steps_equal_the_unbound_planner(planner):
    if not availability(planner).available:
        pytest.skip(availability(planner).reason)
    device = availability(planner).device
    kw = on(make_kw(5), device)
    bound = impls.offsets_planner.bind(planner, **stable(kw))
    for bs in (0, 1, 9, 33):
        step = on(request(kw, bs), device)
        for name in [n for n in kw if n.startswith("out_")]:
            kw[name].fill_(-5)
        want = on(fresh_outputs(step), "cpu")
        bound(*[step[n] for n in REQUEST])
        python_planner.launch(**want)
        assert outputs(step) == outputs(want), bs


@pytest.mark.parametrize("name", list(_mutations(make_kw())))
def test_every_per_step_change_raises_the_validators_error(name):
    kw = make_kw(5, capacity=5000 if name == "bs past the block" else 64)
    bound = impls.offsets_planner.bind(python_planner, **stable(kw))
    bad = _mutations(kw)[name]
    bad = {**kw, **{n: bad[n] for n in REQUEST}}
    want = expected_error(bad)
    assert raised(bound, *[bad[n] for n in REQUEST]) == want
    assert raised(bound.check, *[bad[n] for n in REQUEST]) == want
    assert bound.check(*[request(kw, 3)[n] for n in REQUEST]).bs == 3


def test_bind_raises_the_first_buffer_set_error():
    kw = make_kw(5)
    bad = dict(stable(kw), out_write_offsets=torch.zeros(3, dtype=torch.int64))
    with pytest.raises(PlanError) as err:
        impls.offsets_planner.bind("triton", **bad)
    assert err.value.error_id == "write-offsets-len-mismatch"
    with pytest.raises(TypeError, match="missing"):
        impls.offsets_planner.bind("triton", **{n: kw[n] for n in STABLE_NAMES[:-1]})


def test_unbindable_planner_is_refused():
    with pytest.raises(TypeError, match="cannot be bound"):
        impls.offsets_planner.bind(validate_cache, **stable(make_kw(5)))


def test_bound_launcher_keeps_spec_order_when_both_parts_are_wrong():
    # A request tensor fails item 1 (contiguity, tensor 0) and an output item 2 (dtype): spec
    # section 4 raises the request tensor's contiguity first, though binding fails on the output.
    kw = make_kw(5)
    bad = dict(request(kw, 6), req_pool_indices=torch.arange(1, 13)[::2],
               out_verify_enable=torch.zeros(1, dtype=torch.int64))
    launch = get_planner("triton-bound")
    assert raised(lambda: launch(**bad)) == expected_error(bad)
    assert raised(lambda: launch(**bad))[2] == "contiguous"


@pytest.mark.parametrize("planner", ["triton-bound", "numba-cuda-bound"])
def test_bound_planners_are_registered_launchers(planner):
    info = availability(planner)
    if not info.available:
        pytest.skip(info.reason)
    kw = fresh_outputs(on(request(make_kw(5), 7), info.device))
    want = fresh_outputs(kw)
    get_planner(planner)(**kw)
    want = {n: (v.cpu() if isinstance(v, torch.Tensor) else v) for n, v in want.items()}
    python_planner.launch(**want)
    assert outputs(kw) == outputs(want)
    assert info.mode == availability(planner.removesuffix("-bound")).mode
    assert triton_planner.MODE is not None


def test_the_launcher_shape_binds_once_per_buffer_set_and_rebinds_on_a_new_one():
    from impls.offsets_planner.bound_plan import BoundLauncher, bound_launcher

    launch = bound_launcher(python_planner)
    assert isinstance(launch.through, BoundLauncher) and not launch.through._bound
    kw = make_kw(5)
    for bs in (1, 9, 3):
        step = fresh_outputs(request(kw, bs))
        want = fresh_outputs(step)
        launch(**step)
        python_planner.launch(**want)
        assert outputs(step) == outputs(want), bs
    # fresh_outputs gives new output tensors each step: three buffer sets, three bound plans
    assert len(launch.through._bound) == 3
    step = request(kw, 4)
    launch(**step)
    launch(**request(kw, 2))  # the same buffers again: a hit
    assert len(launch.through._bound) == 4
    step = dict(step, swa_window_size=step["swa_window_size"] + 1)
    launch(**step)
    assert len(launch.through._bound) == 5


def test_check_is_the_buffer_sets_per_step_check():
    kw = make_kw(5)
    bound = impls.offsets_planner.bind(python_planner, **stable(kw))
    assert bound.check == bound.buffers.plan_for
    step = request(kw, 7)
    assert bound.check(*[step[n] for n in REQUEST]) == validate_launch(**step)
