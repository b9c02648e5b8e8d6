"""Deliberately wrong planners: each has the launcher signature of spec section 3 and one planted
bug.

The self-tests (``tests/test_wrong_planners.py``) run the real harness on each of them and require a
:class:`conformance.engine.runner.ConformanceFailure` whose text names the right field and reason. Any of
them also runs from the command line, e.g.::

    pytest conformance/ --planner tests.planted.wrong_planners:off_by_one_scan --case spec7-prefill-and-decodes

Most wrap the pure-Python planner (:mod:`impls.offsets_planner.python_planner`): they validate and plan exactly as
it does through :func:`_plan`, then plant their bug while storing. Never use them outside the
harness: those that read or write past a tensor rely on the harness's garbage tails and guard zones.
"""

from __future__ import annotations

import torch

from impls.offsets_planner.constants import NO_SEED
from impls.offsets_planner.errors import PlanError
from impls.offsets_planner.python_planner import launch as python_launch
from impls.offsets_planner.python_planner import plan_values
from impls.offsets_planner.contract import VALIDATED_TENSORS
from impls.offsets_planner.validate import inner_args, validate_launch

__all__ = [
    "off_by_one_scan",
    "writes_offsets_past_bs",
    "writes_seed_past_bs",
    "zeroes_write_offsets_tail",
    "writes_outside_tensor",
    "reads_past_bs",
    "modifies_input",
    "never_writes_scalar",
    "depends_on_previous_contents",
    "reads_lut_at_minus_one",
    "wrong_error_message",
    "wrong_error_type",
    "wrong_check_order",
    "skips_validation",
    "raises_lookalike_value_error",
    "returns_a_value",
]


def _plan(kwargs: dict, *, lanes: int | None = None) -> dict:
    """Validate and plan as the Python planner does; ``lanes`` overrides how many lanes are read.

    Returns a dict with the LaunchPlan (``plan``) and plan_values' six results (``verify``,
    ``write``, ``seeds``, ``num_valid``, ``enable``, ``reqs``).
    """
    plan = validate_launch(**kwargs)
    n = plan.bs if lanes is None else lanes

    def read(name: str) -> list[int]:
        tensor = kwargs[name]
        # as_strided reads the storage behind the view, past its end when n > bs
        return torch.as_strided(tensor, (n,), (1,)).tolist()

    table, lut = kwargs["req_to_token"], plan.lut_tensor
    values = plan_values(
        read("req_pool_indices"), read("prefix_lens"), read("extend_seq_lens"),
        lambda row, pos: int(table[row, pos].item()),
        lambda index: int(lut[index].item()),
        max_reqs=plan.max_reqs, max_seq_len=plan.max_seq_len, lut_len=plan.lut_len,
        swa_window_size=plan.swa_window_size, verify_capacity=plan.verify_capacity,
    )
    keys = ("verify", "write", "seeds", "num_valid", "enable", "reqs")
    return {"plan": plan, **dict(zip(keys, values))}


def _store(out: torch.Tensor, values: list[int]) -> None:
    out[: len(values)].copy_(torch.tensor(values, dtype=out.dtype))


def _store_all(kwargs: dict, p: dict, *, skip: tuple[str, ...] = ()) -> None:
    stores = {
        "out_verify_offsets_scratch": p["verify"],
        "out_write_offsets": p["write"],
        "out_write_seed_slot_indices": p["seeds"],
        "out_verify_num_valid": [p["num_valid"]],
        "out_verify_enable": [p["enable"]],
        "out_write_num_valid_reqs": [p["reqs"]],
    }
    for name, values in stores.items():
        if name not in skip:
            _store(kwargs[name], values)


def off_by_one_scan(**kwargs) -> None:
    """Bug: the write-offsets scan is inclusive instead of exclusive.

    ``out_write_offsets[r]`` holds the sum of write_len[0..r] (r included) instead of [0..r); the
    total at ``[bs]`` is still right, as is the verify scan.
    """
    p = _plan(kwargs)
    write = p["write"]
    p["write"] = write[1:] + [write[-1]]  # inclusive: element r gets what r + 1 should hold
    _store_all(kwargs, p)


def single_request_total_plus_one(**kwargs) -> None:
    """Bug: a batch of one request writes its total ``out_write_offsets[1]`` one too many: a
    wrong value inside the defined region, also where the right value equals what the element
    held before the call (an earlier larger batch left it there)."""
    p = _plan(kwargs)
    _store_all(kwargs, p)
    if p["plan"].bs == 1:
        kwargs["out_write_offsets"][1] += 1


def writes_offsets_past_bs(**kwargs) -> None:
    """Bug: writes ``out_write_offsets[bs + 1]`` (the total again), one element past the defined
    region [0, bs], whenever the tensor has room for it (a mask of ``r <= bs + 1``)."""
    p = _plan(kwargs)
    _store_all(kwargs, p)
    out, bs = kwargs["out_write_offsets"], p["plan"].bs
    if bs + 1 < out.numel():
        out[bs + 1] = p["write"][-1]


def writes_seed_past_bs(**kwargs) -> None:
    """Bug: writes one seed past ``bs - 1``: ``out_write_seed_slot_indices[bs] = -1`` (no seed)
    whenever the tensor has room for it (the seed loop runs to bs inclusive)."""
    p = _plan(kwargs)
    _store_all(kwargs, p)
    out, bs = kwargs["out_write_seed_slot_indices"], p["plan"].bs
    if bs < out.numel():
        out[bs] = NO_SEED


def zeroes_write_offsets_tail(**kwargs) -> None:
    """Bug: zeroes the whole of ``out_write_offsets`` before planning, as upstream's wrapper does;
    the spec (sections 5 and 6) says the planner leaves everything past ``[bs]`` untouched."""
    p = _plan(kwargs)
    kwargs["out_write_offsets"].zero_()
    _store_all(kwargs, p)


def writes_outside_tensor(**kwargs) -> None:
    """Bug: writes one seed past the end of ``out_write_seed_slot_indices`` itself (index
    ``len``, through ``as_strided`` on its storage): memory that belongs to no tensor argument.
    Only the harness's guard zone makes this safe to run."""
    p = _plan(kwargs)
    _store_all(kwargs, p)
    out = kwargs["out_write_seed_slot_indices"]
    n = out.numel()
    torch.as_strided(out, (n + 1,), (1,))[n] = NO_SEED


def reads_past_bs(**kwargs) -> None:
    """Bug: reads one lane past ``bs`` of each per-request input (the storage behind the view) and
    counts it in the totals (``[bs]`` of both scans and the three scalars); offsets before ``bs``
    and the seeds stay right."""
    p = _plan(kwargs)
    bs = p["plan"].bs
    wide = _plan(kwargs, lanes=bs + 1)
    p["verify"] = p["verify"][:bs] + [wide["verify"][-1]]
    p["write"] = p["write"][:bs] + [wide["write"][-1]]
    p["num_valid"], p["enable"] = wide["num_valid"], wide["enable"]
    _store_all(kwargs, p)


def modifies_input(**kwargs) -> None:
    """Bug: after planning, advances ``prefix_lens`` in place by ``extend_seq_lens`` (as if it
    updated the batch for the next step); inputs are read-only (spec section 5)."""
    p = _plan(kwargs)
    _store_all(kwargs, p)
    kwargs["prefix_lens"].add_(kwargs["extend_seq_lens"])


def never_writes_scalar(**kwargs) -> None:
    """Bug: never writes ``out_write_num_valid_reqs``; it keeps whatever the buffer held."""
    p = _plan(kwargs)
    _store_all(kwargs, p, skip=("out_write_num_valid_reqs",))


def depends_on_previous_contents(**kwargs) -> None:
    """Bug: stores ``out_verify_num_valid`` as an atomic-min into a buffer it never initialised:
    ``min(num_valid, previous contents)``. Right whenever the buffer held something large, wrong
    when it held something smaller: the output depends on what was there before."""
    p = _plan(kwargs)
    _store_all(kwargs, p, skip=("out_verify_num_valid",))
    out = kwargs["out_verify_num_valid"]
    out[0] = min(p["num_valid"], int(out[0].item()))


def reads_lut_at_minus_one(**kwargs) -> None:
    """Bug: translates a negative slot through the LUT with Python/torch negative indexing
    (``lut[-1]`` for slot -1, the LUT's last element) instead of passing it through untranslated
    (spec section 5)."""
    p = _plan(kwargs)
    plan = p["plan"]
    table, lut = kwargs["req_to_token"], plan.lut_tensor
    rows, prefix = kwargs["req_pool_indices"].tolist(), kwargs["prefix_lens"].tolist()
    extend = kwargs["extend_seq_lens"].tolist()
    seeds = list(p["seeds"])
    for r, (row, pref, ext) in enumerate(zip(rows, prefix, extend)):
        if (plan.has_swa_lut and row != 0 and pref > 0 and ext > 0 and 0 <= row < plan.max_reqs
                and plan.max_seq_len > 0):
            slot = int(table[row, min(pref - 1, plan.max_seq_len - 1)].item())
            if slot < 0:
                seeds[r] = int(lut[slot].item())  # lut[-1]: wraps to the last element
    p["seeds"] = seeds
    _store_all(kwargs, p)


def wrong_error_message(**kwargs) -> None:
    """Bug: the right dtype check, the wrong text: prints dtypes without torch's ``torch.`` prefix
    (``must have dtype int64, got int32``); every other error and every valid input is right."""
    try:
        validate_launch(**kwargs)
    except PlanError as exc:
        if exc.error_id == "dtype":
            raise ValueError(str(exc).replace("torch.", "")) from None
        raise
    python_launch(**kwargs)


def wrong_error_type(**kwargs) -> None:
    """Bug: raises ``TypeError`` (not ``ValueError``) for a dtype fault, with the right message."""
    try:
        validate_launch(**kwargs)
    except PlanError as exc:
        if exc.error_id == "dtype":
            raise TypeError(str(exc)) from None
        raise
    python_launch(**kwargs)


def wrong_check_order(**kwargs) -> None:
    """Bug: checks every tensor's dtype before any tensor's contiguity (spec section 4 checks
    contiguity, item 1, first). Right messages; only the order differs."""
    inner = inner_args(**kwargs)
    for name, dtype in VALIDATED_TENSORS:
        tensor = inner[name]
        if tensor.dtype != dtype:
            raise ValueError(f"kv-canary: {name} must have dtype {dtype}, got {tensor.dtype}")
    python_launch(**kwargs)


def skips_validation(**kwargs) -> None:
    """Bug: never validates: plans whatever it gets (no error for a wrong dtype, say)."""
    rpi = kwargs["req_pool_indices"].tolist()
    table, lut = kwargs["req_to_token"], kwargs["full_to_swa_index_mapping"]
    values = plan_values(
        rpi, kwargs["prefix_lens"].tolist(), kwargs["extend_seq_lens"].tolist(),
        lambda row, pos: int(table[row, pos].item()),
        lambda index: int(lut[index].item()),
        max_reqs=table.shape[0], max_seq_len=table.shape[1],
        lut_len=0 if lut is None else lut.shape[0],
        swa_window_size=kwargs["swa_window_size"], verify_capacity=kwargs["verify_capacity"],
    )
    keys = ("verify", "write", "seeds", "num_valid", "enable", "reqs")
    _store_all(kwargs, dict(zip(keys, values)))


LookalikeValueError = type("ValueError", (Exception,), {
    "__doc__": "An exception class merely *named* ``ValueError``: not a subclass of the built-in "
               "one, so a caller's ``except ValueError`` never catches it.",
    "__module__": __name__})


def raises_lookalike_value_error(**kwargs) -> None:
    """Bug: raises the documented errors with the right message and catalog id, but as an
    exception class of its own that is merely named ``ValueError`` (not a subclass of it)."""
    try:
        validate_launch(**kwargs)
    except PlanError as exc:
        lookalike = LookalikeValueError(str(exc))
        lookalike.error_id = exc.error_id
        raise lookalike from None
    python_launch(**kwargs)


def returns_a_value(**kwargs) -> int:
    """Bug: plans right, then returns the number of requests (spec section 3: returns None)."""
    python_launch(**kwargs)
    return int(kwargs["req_pool_indices"].shape[0])
