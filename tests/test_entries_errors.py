"""Every documented entries-planner error, its exact text, and the order the checks run in.

Spec: docs/spec/entries-planner.md section 4. Each planner is called through its own ``launch``;
an error must be raised before anything is written (the outputs keep their poison).
"""

from __future__ import annotations

import pytest
import torch

from impls.entries_planner import PLANNERS, get_planner
from impls.entries_planner.errors import CATALOG, identify
from impls.offsets_planner.errors import PlanError
from tests.entries_oracle import POISON, build, linear_pool

META = torch.device("meta")


@pytest.fixture(scope="module", params=list(PLANNERS))
def planner(request):
    try:
        return get_planner(request.param)
    except RuntimeError as exc:
        pytest.skip(str(exc))


def valid_kwargs():
    kwargs, _, _ = build([1], [2], pool=linear_pool(), valid=[16], capacity=3)
    return kwargs


def strided(tensor):
    """The same values, not contiguous."""
    return torch.stack([tensor, tensor], dim=-1)[..., 0]


CASES = {
    "pool-without-valid-lens": (
        {"req_to_verify_expected_tokens_valid_lens": None},
        "kv-canary: launch_plan_entries_kernel requires req_to_verify_expected_tokens_valid_lens "
        "when req_to_verify_expected_tokens is set"),
    "rank/1d": ({"req_pool_indices": torch.ones(1, 1, dtype=torch.int64)},
                "kv-canary: req_pool_indices must be 1-D, got shape (1, 1)"),
    "rank/0d": ({"verify_enable": torch.tensor(1, dtype=torch.int32)},
                "kv-canary: verify_enable must be 1-D, got shape ()"),
    "rank/2d": ({"req_to_token": torch.zeros(64, dtype=torch.int32)},
                "kv-canary: req_to_token must be 2-D, got shape (64,)"),
    "dtype": ({"prefix_lens": torch.tensor([2], dtype=torch.int32)},
              "kv-canary: prefix_lens must have dtype torch.int64, got torch.int32"),
    "dtype/pool": ({"req_to_verify_expected_tokens": linear_pool().long()},
                   "kv-canary: req_to_verify_expected_tokens must have dtype torch.int32, "
                   "got torch.int64"),
    "length/bs": ({"prefix_lens": torch.tensor([2, 2], dtype=torch.int64)},
                  "kv-canary: prefix_lens length must be 1, got 2"),
    "length/enable": ({"verify_enable": torch.ones(2, dtype=torch.int32)},
                      "kv-canary: verify_enable length must be 1, got 2"),
    "length/capacity": ({"out_verify_expected_positions": torch.zeros(4, dtype=torch.int64)},
                        "kv-canary: out_verify_expected_positions length must be 3, got 4"),
    "length/valid-lens": ({"req_to_verify_expected_tokens_valid_lens": torch.ones(
        3, dtype=torch.int64)}, "kv-canary: req_to_verify_expected_tokens_valid_lens length "
                                "must be 1, got 3"),
    "contiguous": ({"out_verify_prev_slot_indices": strided(torch.zeros(3, dtype=torch.int64))},
                   "kv-canary: out_verify_prev_slot_indices must be contiguous"),
    "device": ({"verify_enable": torch.ones(1, dtype=torch.int32, device=META)},
               "kv-canary: verify_enable must be on req_pool_indices's device cpu, got meta"),
    "scratch-min-length": ({"verify_offsets_scratch": torch.zeros(1, dtype=torch.int64)},
                           "kv-canary: verify_offsets_scratch length must be >= bs + 1 = 2, got 1"),
    "scalar-int32/range": ({"swa_window_size": 1 << 31}, "kv-canary: swa_window_size must be an "
                           "int in [-2147483648, 2147483647], got 2147483648"),
    "scalar-int32/type": ({"kv_token_id_vs_position_offset": 1.5},
                          "kv-canary: kv_token_id_vs_position_offset must be an int in "
                          "[-2147483648, 2147483647], got 1.5"),
}


def raised(planner, changes) -> str:
    kwargs = valid_kwargs()
    kwargs.update(changes)
    with pytest.raises(PlanError) as info:
        planner(**kwargs)
    for name in ("out_verify_slot_indices", "out_verify_expected_tokens",
                 "out_verify_expected_positions", "out_verify_prev_slot_indices"):
        if name not in changes:  # the builder's poison-filled output
            assert kwargs[name].tolist() == [POISON] * 3, f"{name} written before the error"
    return str(info.value)


@pytest.mark.parametrize("case", list(CASES))
def test_each_error_has_its_exact_text(planner, case):
    changes, message = CASES[case]
    assert raised(planner, changes) == message
    assert identify(message) == case.split("/")[0]


def test_every_catalog_entry_is_reached_and_identified():
    ids = {identify(message) for _, message in CASES.values()}
    assert ids == set(CATALOG)


ORDER = [
    # (what is wrong, the error that wins): spec section 4's order.
    ({"req_to_verify_expected_tokens_valid_lens": None, "req_pool_indices": torch.ones(
        1, 1, dtype=torch.int64)}, "pool-without-valid-lens"),
    ({"out_verify_slot_indices": strided(torch.zeros(3, dtype=torch.int64)),
      "req_to_token": torch.zeros(64, dtype=torch.int32)}, "contiguous"),  # tensor by tensor
    ({"prefix_lens": torch.ones(1, 1, dtype=torch.int32)}, "rank"),         # rank before dtype
    ({"prefix_lens": torch.ones(2, dtype=torch.int32)}, "dtype"),           # dtype before length
    ({"prefix_lens": strided(torch.ones(2, dtype=torch.int64))}, "length"),  # length, contiguity
    ({"out_verify_slot_indices": strided(torch.zeros(3, dtype=torch.int64, device=META))},
     "contiguous"),                                                         # contiguity, device
    ({"verify_offsets_scratch": torch.zeros(1, dtype=torch.int64),
      "out_verify_slot_indices": torch.zeros(3, dtype=torch.int32)}, "dtype"),  # scratch len last
    ({"verify_offsets_scratch": torch.zeros(1, dtype=torch.int64), "swa_window_size": 1.5},
     "scratch-min-length"),
]


@pytest.mark.parametrize("index", range(len(ORDER)))
def test_the_first_failing_check_wins(planner, index):
    changes, winner = ORDER[index]
    assert identify(raised(planner, changes)) == winner


def test_valid_lens_without_pool_is_ignored(planner):
    """Upstream reads valid_lens only with a pool: a wrong one is not checked without it."""
    kwargs, _, expected = build([1], [2], capacity=2)
    kwargs["req_to_verify_expected_tokens_valid_lens"] = torch.ones(5, dtype=torch.int32)
    planner(**kwargs)
    assert kwargs["out_verify_expected_tokens"].tolist() == [-1, -1]


def test_a_window_without_a_lut_is_not_an_error(planner):
    """The LUT check of swa_window_size > 0 is the wrapper's (offsets spec §4 item 0), not this
    launcher's: entries come out untranslated."""
    kwargs, _, _ = build([1], [4], window=2, capacity=2)
    planner(**kwargs)
    assert kwargs["out_verify_slot_indices"].tolist() == [18, 19]


def test_missing_and_unknown_keywords_are_type_errors(planner):
    kwargs = valid_kwargs()
    del kwargs["swa_window_size"]
    with pytest.raises(TypeError):
        planner(**kwargs)
    kwargs = valid_kwargs()
    kwargs["extend_seq_lens"] = kwargs["prefix_lens"]
    with pytest.raises(TypeError):
        planner(**kwargs)


def test_a_non_tensor_is_a_type_error(planner):
    kwargs = valid_kwargs()
    kwargs["verify_enable"] = [1]
    with pytest.raises(TypeError, match=r"^kv-canary: verify_enable must be a torch.Tensor, got list$"):
        planner(**kwargs)
