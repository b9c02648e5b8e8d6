"""The memo's fast path (impls/offsets_planner/validate_cache.py, impls/offsets_planner/metadata_guard.py): the same buffer-set
objects as the last call skip the key, and every way those objects can change in place (another
dtype, shape or stride behind the same data pointer, a resize, ``as_strided_``, ``set_``) or a
request tensor can differ still gets exactly the validator's answer (spec section 4)."""

from __future__ import annotations

import pytest
import torch

from impls.offsets_planner import buffer_set, metadata_guard, validate_cache
from impls.offsets_planner.validate import validate_launch
from tests.test_validate_cache import CAPACITY, expected_error, make_kw, raised, request


@pytest.fixture(autouse=True)
def fresh_memo():
    validate_cache.clear()
    yield
    validate_cache.clear()


@pytest.fixture
def keyed(monkeypatch):
    """Counts the lookups that took the keyed path (the key was read), not the fast path."""
    calls = []
    real = validate_cache.stable_key_of

    def counting(*args):
        calls.append(1)
        return real(*args)

    monkeypatch.setattr(validate_cache, "stable_key_of", counting)
    return calls


def _outcome(kw: dict):
    """What the validator says of ``kw``: its plan, or its error (type, message, id)."""
    try:
        return validate_launch(**kw)
    except Exception as exc:  # noqa: BLE001
        return type(exc), str(exc), getattr(exc, "error_id", None)


def _memo_outcome(kw: dict):
    try:
        return validate_cache.lookup(kw)[0]
    except Exception as exc:  # noqa: BLE001
        return type(exc), str(exc), getattr(exc, "error_id", None)


def test_guards_work_on_this_torch():
    assert metadata_guard.AVAILABLE  # the import-time self-check passed: the fast path is on


@pytest.mark.parametrize("lut", [True, False])
def test_the_same_buffer_set_skips_the_key_for_reused_and_fresh_tensors(keyed, lut):
    kw = make_kw(5, lut=lut)
    start = validate_cache.stats()  # counters since import
    plan, buffers = validate_cache.lookup(kw)
    assert keyed == [1]
    for bs in (5, 0, 1, 17, CAPACITY, 17):
        step = request(kw, bs)
        got, again = validate_cache.lookup(step)
        assert again is buffers and got == validate_launch(**step) and got.bs == bs
    assert validate_cache.lookup(kw)[0] is plan  # the reused tensors: the same plan object
    assert keyed == [1]  # never keyed again
    now = validate_cache.stats()
    assert (now["hits"] - start["hits"], now["misses"] - start["misses"]) == (7, 1)


def _same_pointer_swaps(kw: dict) -> dict:
    """In-place changes of one buffer-set tensor that keep its object (and most keep its data
    pointer): each must be seen."""
    out_seed, table = kw["out_write_seed_slot_indices"], kw["req_to_token"]
    return {
        "output as float64, same pointer": ("out_write_offsets",
                                            lambda t: setattr(t, "data", t.view(torch.float64))),
        "output as int32, same pointer": ("out_write_offsets",
                                          lambda t: setattr(t, "data", t.view(torch.int32))),
        "output shorter, same pointer": ("out_verify_offsets_scratch",
                                         lambda t: setattr(t, "data", t[:3])),
        "output 2-D, same pointer": ("out_write_seed_slot_indices",
                                     lambda t: setattr(t, "data", t.view(2, -1))),
        "output strided, same pointer": ("out_write_seed_slot_indices",
                                         lambda t: t.as_strided_((out_seed.numel() // 2,), (2,))),
        "output resized smaller": ("out_write_offsets", lambda t: t.resize_(3)),
        "output resized larger": ("out_write_offsets", lambda t: t.resize_(5000)),
        "scalar output resized to 2": ("out_verify_enable", lambda t: t.resize_(2)),
        "table restrided": ("req_to_token", lambda t: t.as_strided_((8, 5), (10, 2))),
        "table as int64, same pointer": ("req_to_token",
                                         lambda t: setattr(t, "data", t.view(torch.int64))),
        "table transposed in place": ("req_to_token", lambda t: t.t_()),
        "table set_ to fewer rows": ("req_to_token",
                                     lambda t: t.set_(t.untyped_storage(), 0, (2, 10), (10, 1))),
        "lut as int32, same pointer": ("full_to_swa_index_mapping",
                                       lambda t: setattr(t, "data", t.view(torch.int32))),
        "lut unsqueezed": ("full_to_swa_index_mapping", lambda t: t.unsqueeze_(0)),
        "output on new storage, same metadata": (
            "out_write_seed_slot_indices",
            lambda t: t.set_(torch.zeros(out_seed.shape, dtype=out_seed.dtype))),
        "table storage reallocated": ("req_to_token",
                                      lambda t: t.set_(table.clone().untyped_storage(), 0,
                                                       table.shape, table.stride())),
    }


@pytest.mark.parametrize("name", list(_same_pointer_swaps(make_kw())))
def test_a_buffer_set_tensor_changed_in_place_is_seen(name):
    kw = make_kw(5)
    validate_cache.lookup(kw)
    validate_cache.lookup(request(kw, 6))  # the fast path is warm
    step = request(kw, 6)
    arg, change = _same_pointer_swaps(kw)[name]
    change(step[arg])
    want = _outcome(step)
    got = _memo_outcome(step)
    assert got == want, name
    assert _memo_outcome(step) == want  # twice: a failure is never memoised
    if not isinstance(want, tuple):  # it passes: the memo now holds the new pointers
        plan, buffers = validate_cache.lookup(step)
        names = buffer_set.STABLE_TENSOR_NAMES
        assert buffers.tensors[names.index(arg)].data_ptr() == step[arg].data_ptr()


def _request_changes(kw: dict) -> dict:
    bs = 6
    base = request(kw, bs)

    def with_(**changed):
        return dict(base, **changed)

    class Sub(torch.Tensor):
        pass

    with torch.inference_mode():
        inference = torch.arange(bs) % 3
    return {
        "int32": with_(prefix_lens=base["prefix_lens"].to(torch.int32)),
        "float64 same pointer": with_(prefix_lens=base["prefix_lens"].view(torch.float64)),
        "strided": with_(req_pool_indices=(torch.arange(2 * bs) % 7 + 1)[::2]),
        "2-D": with_(extend_seq_lens=base["extend_seq_lens"].reshape(2, 3)),
        "lengths differ": with_(extend_seq_lens=torch.ones(bs + 1, dtype=torch.int64)),
        "bs past capacity": request(kw, CAPACITY + 1),
        "on meta": with_(prefix_lens=base["prefix_lens"].to("meta")),
        "subclass": with_(prefix_lens=base["prefix_lens"].as_subclass(Sub)),
        "inference-mode tensor": with_(extend_seq_lens=inference),
        "bs 1, stride 5 (contiguous to torch)": dict(
            request(kw, 1), prefix_lens=torch.arange(5, dtype=torch.int64)[::5]),
        "not a tensor": with_(prefix_lens=[3] * bs),
        "None": with_(req_pool_indices=None),
    }


@pytest.mark.parametrize("name", list(_request_changes(make_kw())))
def test_request_tensors_get_the_validators_answer_on_the_fast_path(name):
    kw = make_kw(5)
    validate_cache.lookup(kw)
    validate_cache.lookup(request(kw, 6))
    step = _request_changes(kw)[name]
    step = {**kw, **{n: step[n] for n in ("req_pool_indices", "prefix_lens", "extend_seq_lens")}}
    assert _memo_outcome(step) == _outcome(step), name
    assert validate_cache.lookup(request(kw, 6))[0].bs == 6  # the buffer set still works


def test_request_tensor_resized_in_place_after_a_fast_hit():
    kw = request(make_kw(5), 6)
    validate_cache.lookup(kw)
    validate_cache.lookup(kw)
    kw["prefix_lens"].resize_(7)
    assert raised(validate_cache.lookup, kw) == expected_error(kw)
    kw["prefix_lens"].resize_(6)
    kw["extend_seq_lens"].as_strided_((3,), (2,))
    assert raised(validate_cache.lookup, kw)[2] == "contiguous"


def test_another_grad_mode_rebuilds_the_guard(keyed):
    kw = make_kw(5)
    validate_cache.lookup(kw)
    with torch.inference_mode():  # the guard was built outside: its check fails here
        for i in range(buffer_set._REBUILD_AFTER + 3):
            step = request(kw, 4)
            assert validate_cache.lookup(step)[0] == validate_launch(**step)
    # every call answered right; after the rebuild the fast path holds again
    assert len(keyed) <= 1 + buffer_set._REBUILD_AFTER


def test_without_guards_the_memo_reads_every_attribute(monkeypatch, keyed):
    monkeypatch.setattr(buffer_set, "guard_for", lambda *a: None)
    kw = make_kw(5)
    validate_cache.lookup(kw)
    step = request(kw, 6)
    assert validate_cache.lookup(step)[0] == validate_launch(**step)
    step["out_write_offsets"].data = step["out_write_offsets"].view(torch.float64)
    assert raised(validate_cache.lookup, step) == expected_error(step)
    assert len(keyed) == 3  # no fast path: every call keyed


def test_the_memo_cost_sweep_prints_each_path_and_its_ratio(capsys):
    from impls.offsets_planner.harness.sweeps import memo_cost

    assert memo_cost.main(["--calls", "200", "--repeat", "1", "--bs", "8"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "fast path (impls.offsets_planner.metadata_guard) available: True"
    rows = {ln[2:24].strip(): ln[24:].split() for ln in lines[2:]}
    assert list(rows) == ["call floor", "reused", "fresh", "varying-bs", "fresh, keyed path",
                          "key only", "request checks only"]
    assert rows["call floor"][2] == "(" and rows["call floor"][3] == "1.0x"
    assert all(float(r[0]) > 0 and r[1] == "us" for r in rows.values())
