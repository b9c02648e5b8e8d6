"""The validation memo (impls/offsets_planner/validate_cache.py, its buffer sets:
impls/offsets_planner/buffer_set.py): a new bs or new request tensors never cost a full
validation, and no check of spec section 4 is ever skipped when its inputs changed: every way a
per-step tensor (or a buffer-set tensor, in place) can change raises exactly the validator's error."""

from __future__ import annotations

import pytest
import torch

from impls.offsets_planner import buffer_set, validate_cache
from impls.offsets_planner.buffers import PlanBuffers
from impls.offsets_planner.validate import validate_launch

CAPACITY = 64


def make_kw(bs: int = 5, *, lut: bool = True, capacity: int = CAPACITY) -> dict:
    """The 13 launcher arguments of a small valid plan on the CPU."""
    buffers = PlanBuffers.allocate(write_req_capacity=capacity, verify_capacity=1000)
    kw = {"req_pool_indices": torch.arange(1, bs + 1), "prefix_lens": torch.full((bs,), 3),
          "extend_seq_lens": torch.ones(bs, dtype=torch.int64),
          "req_to_token": torch.arange(80, dtype=torch.int32).reshape(8, 10) % 37,
          "full_to_swa_index_mapping": torch.arange(40) if lut else None,
          "swa_window_size": 4 if lut else 0}
    kw.update(buffers.launcher_kwargs())
    return kw


def request(kw: dict, bs: int) -> dict:
    """``kw`` with new request tensors of length ``bs`` (new objects, new storage)."""
    return dict(kw, req_pool_indices=torch.arange(1, bs + 1) % 7 + 1,
                prefix_lens=torch.arange(bs) % 12, extend_seq_lens=torch.arange(bs) % 3)


def expected_error(kw: dict) -> tuple[type, str, str | None]:
    with pytest.raises(Exception) as info:
        validate_launch(**kw)
    return type(info.value), str(info.value), getattr(info.value, "error_id", None)


def raised(fn, *args) -> tuple[type, str, str | None]:
    with pytest.raises(Exception) as info:
        fn(*args)
    return type(info.value), str(info.value), getattr(info.value, "error_id", None)


@pytest.fixture(autouse=True)
def fresh_memo():
    validate_cache.clear()
    yield
    validate_cache.clear()


@pytest.fixture
def full_validations(monkeypatch):
    """Counts calls of the full validator made by the memo (and by its buffer sets)."""
    calls = []

    def counting(**kw):
        calls.append(kw["req_pool_indices"].shape[0] if hasattr(kw["req_pool_indices"], "shape")
                     else None)
        return validate_launch(**kw)

    monkeypatch.setattr(validate_cache, "validate_launch", counting)
    monkeypatch.setattr(buffer_set, "validate_launch", counting)
    return calls


def test_new_bs_and_new_tensors_are_hits_without_full_validation(full_validations):
    kw = make_kw(5)
    plan, buffers = validate_cache.lookup(kw)
    assert full_validations == [5] and plan.bs == 5
    for bs in (0, 1, 17, CAPACITY, 5, 17):
        step = request(kw, bs)
        plan2, buffers2 = validate_cache.lookup(step)
        assert buffers2 is buffers and plan2.bs == bs
        assert plan2 == validate_launch(**step)  # the same plan the validator derives
    assert full_validations == [5]
    assert validate_cache.lookup(request(kw, 17))[0] is plan2  # one plan object per bs
    assert validate_cache.stats()["hits"] >= 7


def _mutations(kw: dict) -> dict[str, dict]:
    bs, other = 6, torch.arange(12)
    base = request(kw, bs)
    return {
        "dtype int32": dict(base, prefix_lens=base["prefix_lens"].to(torch.int32)),
        "dtype float": dict(base, extend_seq_lens=base["extend_seq_lens"].double()),
        "length differs": dict(base, extend_seq_lens=torch.ones(bs + 1, dtype=torch.int64)),
        "2-D": dict(base, req_pool_indices=base["req_pool_indices"].reshape(2, 3)),
        "0-d": dict(base, prefix_lens=torch.tensor(3)),
        "strided (non-contiguous)": dict(base, req_pool_indices=(other + 1)[::2]),
        "stride of a 2-D view": dict(base, prefix_lens=torch.ones(bs, 2, dtype=torch.int64)[:, 0]),
        "device": dict(base, extend_seq_lens=base["extend_seq_lens"].to("meta")),
        "all on another device": {**base, **{n: base[n].to("meta") for n in
                                              ("req_pool_indices", "prefix_lens",
                                               "extend_seq_lens")}},
        "bs past capacity": request(kw, CAPACITY + 1),
        "bs past the block": request(make_kw(5, capacity=5000), 4097),
        "not a tensor": dict(base, prefix_lens=[3] * bs),
        "None": dict(base, req_pool_indices=None),
    }


@pytest.mark.parametrize("name", list(_mutations(make_kw())))
def test_every_per_step_change_raises_the_validators_error(name, full_validations):
    kw = make_kw(5, capacity=5000 if name == "bs past the block" else CAPACITY)
    validate_cache.lookup(kw)
    validate_cache.lookup(request(kw, 6))  # warm: the buffer set is a hit now
    bad = _mutations(kw)[name]
    bad = {**kw, **{n: bad[n] for n in ("req_pool_indices", "prefix_lens", "extend_seq_lens")}}
    want = expected_error(bad)
    assert raised(validate_cache.lookup, bad) == want
    assert raised(validate_cache.lookup, bad) == want  # a failure is never memoised
    assert validate_cache.lookup(request(kw, 6))[0].bs == 6  # and the buffer set still works


def test_per_step_tensor_changed_in_place_is_rechecked():
    kw = request(make_kw(5), 6)
    validate_cache.lookup(kw)
    kw["prefix_lens"].resize_(7)  # same object, new length
    assert raised(validate_cache.lookup, kw) == expected_error(kw)
    kw["prefix_lens"].resize_(6)
    kw["extend_seq_lens"].as_strided_((3,), (2,))  # same object, non-contiguous (and shorter)
    assert raised(validate_cache.lookup, kw)[2] == "contiguous"


@pytest.mark.parametrize("change", ["resize output", "restride table", "retype output",
                                    "new storage", "lut to meta"])
def test_buffer_set_changed_in_place_misses_and_raises(change):
    kw = make_kw(5)
    validate_cache.lookup(kw)
    if change == "resize output":
        kw["out_write_offsets"].resize_(CAPACITY + 2)
    elif change == "restride table":
        kw["req_to_token"].as_strided_((8, 5), (10, 2))
    elif change == "retype output":
        kw["out_verify_enable"].data = torch.zeros(1, dtype=torch.int64)  # same object, int64
    elif change == "new storage":  # same metadata, new memory: a miss, validated, then a pass
        kw["out_write_seed_slot_indices"].set_(torch.zeros(CAPACITY, dtype=torch.int64))
    else:
        kw["full_to_swa_index_mapping"] = kw["full_to_swa_index_mapping"].to("meta")
    misses = validate_cache.stats()["misses"]
    if change == "new storage":
        plan, buffers = validate_cache.lookup(kw)
        assert validate_cache.stats()["misses"] == misses + 1
        assert buffers.tensors[4].data_ptr() == kw["out_write_seed_slot_indices"].data_ptr()
        return
    assert raised(validate_cache.lookup, kw) == expected_error(kw)


def test_scalars_change_the_key_and_odd_scalars_bypass():
    kw = make_kw(5)
    validate_cache.lookup(kw)
    assert raised(validate_cache.lookup, dict(kw, verify_capacity=-1)) == \
        expected_error(dict(kw, verify_capacity=-1))
    assert validate_cache.lookup(dict(kw, swa_window_size=9))[0].swa_window_size == 9
    bypass = validate_cache.stats()["bypass"]
    assert validate_cache.lookup(dict(kw, verify_capacity=True))[0].verify_capacity == 1
    assert validate_cache.stats()["bypass"] == bypass + 1
    no_lut = make_kw(5, lut=False)
    assert validate_cache.lookup(no_lut)[0].has_swa_lut is False
    assert raised(validate_cache.lookup, dict(no_lut, swa_window_size=2))[2] == "swa-lut-required"


def test_lru_evicts_the_least_recently_used_never_everything(monkeypatch):
    monkeypatch.setattr(validate_cache, "MAX_ENTRIES", 3)
    sets = [make_kw(5) for _ in range(4)]
    for kw in sets[:3]:
        validate_cache.lookup(kw)
    validate_cache.lookup(sets[0])  # 0 is now the most recently used; 1 the least
    validate_cache.lookup(sets[3])
    assert validate_cache.entries() == 3
    misses = validate_cache.stats()["misses"]
    for i in (0, 2, 3):
        validate_cache.lookup(sets[i])
    assert validate_cache.stats()["misses"] == misses  # still held
    validate_cache.lookup(sets[1])
    assert validate_cache.stats()["misses"] == misses + 1  # evicted, validated again


def test_bind_set_raises_the_first_buffer_set_error_and_makes_the_zero_lut():
    kw = make_kw(5, lut=False)
    stable = {n: kw[n] for n in buffer_set.STABLE_NAMES}
    buffers = buffer_set.bind_set(**stable)
    assert buffers.tensors[1].tolist() == [0] and buffers.max_bs == CAPACITY
    bad = dict(stable, out_write_offsets=torch.zeros(CAPACITY, dtype=torch.int64),
               out_verify_enable=torch.zeros(1, dtype=torch.int64))
    assert raised(lambda: buffer_set.bind_set(**bad)) == expected_error(
        {**bad, **{n: torch.zeros(0, dtype=torch.int64) for n in
                   ("req_pool_indices", "prefix_lens", "extend_seq_lens")}})
    assert raised(lambda: buffer_set.bind_set(**bad))[2] == "dtype"
    with pytest.raises(TypeError, match="missing"):
        buffer_set.bind_set(req_to_token=kw["req_to_token"])


def test_lookup_args_takes_the_launchers_order_and_agrees_with_lookup():
    from impls.offsets_planner.contract import ARGUMENT_NAMES

    assert ARGUMENT_NAMES[3:] == validate_cache.STABLE_NAMES  # lookup_args' positional layout
    kw = make_kw(5)
    plan, buffers = validate_cache.lookup(kw)
    step = request(kw, 9)
    plan2, buffers2 = validate_cache.lookup_args(*[step[n] for n in ARGUMENT_NAMES])
    assert buffers2 is buffers and plan2 == validate_launch(**step)
    bad = dict(step, prefix_lens=step["prefix_lens"].to(torch.int32))
    assert raised(validate_cache.lookup_args, *[bad[n] for n in ARGUMENT_NAMES]) == \
        expected_error(bad)


def test_unknown_or_missing_keyword_raises_even_on_a_hit():
    kw = make_kw(5)
    validate_cache.lookup(kw)
    with pytest.raises(TypeError, match="unexpected keyword argument.*bogus"):
        validate_cache.lookup(dict(kw, bogus=1))
    short = dict(kw)
    del short["prefix_lens"]
    with pytest.raises(TypeError, match="missing keyword argument.*prefix_lens"):
        validate_cache.lookup(short)


@pytest.mark.parametrize("change", ["output non-contiguous", "lut non-contiguous",
                                    "lut shorter"])
def test_one_d_buffers_keyed_on_contiguity_still_raise(change):
    """The LUT and the outputs are keyed on is_contiguous(), not stride(): a change in place that
    breaks contiguity or a length misses and raises the validator's error."""
    kw = make_kw(5)
    validate_cache.lookup(kw)
    if change == "output non-contiguous":
        out = kw["out_write_offsets"]
        out.as_strided_((out.shape[0] // 2,), (2,))
    elif change == "lut non-contiguous":
        kw["full_to_swa_index_mapping"].as_strided_((20,), (2,))
    else:
        kw["full_to_swa_index_mapping"].resize_(0)
    want = expected_error(kw)
    assert raised(validate_cache.lookup, kw) == want
    assert want[2] in ("contiguous", "length", "lut-len-positive", "write-offsets-len-mismatch")


def test_contiguous_restride_of_an_output_is_still_a_hit():
    """A one-element output given another stride stays contiguous: the same buffer set, no miss
    (its checks and the launch read only data pointer, dtype, shape and contiguity)."""
    kw = make_kw(5)
    validate_cache.lookup(kw)
    misses = validate_cache.stats()["misses"]
    kw["out_verify_enable"].as_strided_((1,), (7,))
    assert kw["out_verify_enable"].is_contiguous()
    plan, _ = validate_cache.lookup(kw)
    assert validate_cache.stats()["misses"] == misses and plan == validate_launch(**kw)


def test_hits_are_counted():
    kw = make_kw(5)
    before = validate_cache.stats()
    validate_cache.lookup(kw)
    validate_cache.lookup(request(kw, 3))
    validate_cache.lookup(request(kw, 4))
    after = validate_cache.stats()
    assert after["misses"] - before["misses"] == 1 and after["hits"] - before["hits"] == 2
