"""A memo in front of the shared validator, for planners that run every serving step.

:func:`impls.offsets_planner.validate.validate_launch` reads only tensor *metadata* (contiguity, dtype, shape,
stride, device) and two plain ints; it never reads values (spec section 4). A server keeps the
*buffer set* (``req_to_token``, the LUT, the six outputs, the window and the capacity) between
steps and hands the planner three new request tensors of a new length bs every step. The memo is
split the same way (:mod:`impls.offsets_planner.buffer_set`):

* a validated :class:`~impls.offsets_planner.buffer_set.BufferSet` is kept under its key
  (:func:`~impls.offsets_planner.buffer_set.stable_key_of`: every input of every check of spec
  section 4 that does not involve a request tensor). A key is read afresh on every call, so a
  tensor resized, re-strided, re-typed, moved or given new storage in place misses and is
  validated again in full;
* the request tensors are re-checked on every call by
  :meth:`~impls.offsets_planner.buffer_set.BufferSet.plan_for` (the checks of spec section 4 that
  read a request tensor); when one fails, the full validator runs on the call's arguments and
  raises its error: the first failing check and its message are always the validator's own. A new
  bs or new request tensors never cost a full validation.

**The fast path** (a server calling with the same buffer set as its last call): when the ten
buffer-set arguments are the very objects of the last buffer set used (``is``; the two ints equal
plain ints), one C call (:mod:`impls.offsets_planner.metadata_guard`) checks that every one of the eleven
tensors' dtype, device, dispatch keys, sizes and strides are the buffer set's (the request
tensors: int64, 1-D, stride 1, on its device, any length), and the data pointers are compared as
a tuple; then the three lengths must be equal and at most ``max_bs``. That is every field of the
key and every per-step check (stricter: a stride of 1, where a tensor of one element may have any),
so a tensor changed in place (``as_strided_``, ``resize_``, ``set_``, ``.data =`` another dtype
with the same data pointer) fails it. Any failure takes the path above, whose checks and errors
are the validator's.

Only validations that passed are stored. Only plain ``int`` scalars are memoised; anything unusual
(a bool or numpy scalar, an argument that is not a tensor) bypasses the memo. A buffer set keeps its
tensors alive (so a data pointer in a key cannot be reused by another tensor while the entry lives);
at most :data:`MAX_ENTRIES` are kept, the least recently used evicted first, with the planners'
launch records they hold (:attr:`~impls.offsets_planner.buffer_set.BufferSet.records`).
"""

from __future__ import annotations

from operator import itemgetter

from impls.offsets_planner import buffer_set as _buffer_set
from impls.offsets_planner.buffer_set import _DATA_PTR, _STATS, BufferSet, stable_key_of
from impls.offsets_planner.contract import ARGUMENT_NAMES
from impls.offsets_planner.validate import LaunchPlan, validate_launch

STABLE_NAMES: tuple[str, ...] = _buffer_set.STABLE_NAMES
"""Every launcher argument except the three request tensors (a corpus subject's
``validate_cache`` names them: ``conformance/corpus/corpus_subject.py``)."""

MAX_ENTRIES: int = 64
"""Buffer sets kept (a server uses a handful); the least recently used is evicted first."""

_ARGUMENTS = itemgetter(*ARGUMENT_NAMES)  # the 13, in lookup_args' order
_ARGUMENT_COUNT = len(ARGUMENT_NAMES)
_MEMO: dict[tuple, BufferSet] = {}
_LAST: list = [None]  # the buffer set of the last lookup: the fast path's candidate
_CLOCK = [0]  # lookups so far: a buffer set's ``used`` is the clock of its last lookup


def lookup(kw: dict) -> tuple[LaunchPlan, BufferSet | None]:
    """(plan, buffer set) of the 13 launcher arguments (a dict), through the memo: see
    :func:`lookup_args`.

    Raises:
        PlanError: whatever :func:`impls.offsets_planner.validate.validate_launch` raises, unchanged (spec section 4).
        TypeError: a missing launcher argument.
    """
    try:
        if len(kw) != _ARGUMENT_COUNT:
            raise KeyError
        args = _ARGUMENTS(kw)
    except KeyError:
        validate_launch(**kw)  # raises the TypeError that names what is missing or unknown
        raise
    return lookup_args(*args)


def lookup_args(rpi, prefix, extend, t, lut, a, b, c, d, e, f, swa, cap
                ) -> tuple[LaunchPlan, BufferSet | None]:
    """(plan, buffer set) of the 13 launcher arguments given positionally in the order of
    :data:`impls.offsets_planner.contract.ARGUMENT_NAMES` (a planner's ``launch`` passes its parameters on without
    building a dict), through the memo (module docstring).

    Returns:
        The :class:`LaunchPlan` (cached per buffer set and bs) and its :class:`BufferSet`, or None
        when the arguments bypass the memo.

    Raises:
        PlanError: whatever :func:`impls.offsets_planner.validate.validate_launch` raises, unchanged (spec section 4).
    """
    last = _LAST[0]
    if last is not None:  # the fast path (module docstring)
        o = last.objects
        if (t is o[0] and lut is o[1] and a is o[2] and b is o[3] and c is o[4] and d is o[5]
                and e is o[6] and f is o[7] and type(swa) is int and type(cap) is int
                and (swa, cap) == last.scalars and last.guard is not None):
            dp = _DATA_PTR
            if lut is None:
                same = (last.guard(t, a, b, c, d, e, f, rpi, prefix, extend)
                        and (dp(t), dp(a), dp(b), dp(c), dp(d), dp(e), dp(f)) == last.ptrs)
            else:
                same = (last.guard(t, lut, a, b, c, d, e, f, rpi, prefix, extend)
                        and (dp(t), dp(lut), dp(a), dp(b), dp(c), dp(d), dp(e), dp(f))
                        == last.ptrs)
            if same:
                shape = rpi.shape
                if prefix.shape == shape and extend.shape == shape and shape[0] <= last.max_bs:
                    last.fast_misses = 0
                    clock = _CLOCK[0] = _CLOCK[0] + 1
                    last.used = clock
                    bs = shape[0]
                    plan = last._plans[bs]
                    if plan is None:
                        plan = last._plans[bs] = last._plan_of(bs)
                    return plan, last
            else:
                last.fast_failed()
    try:
        key = stable_key_of(t, lut, a, b, c, d, e, f, swa, cap)
        entry = _MEMO.get(key)
    except Exception:  # not tensors, unhashable: let the validator speak
        _STATS["bypass"] += 1
        return validate_launch(**_as_kwargs(rpi, prefix, extend, t, lut, a, b, c, d, e, f, swa,
                                            cap)), None
    clock = _CLOCK[0] = _CLOCK[0] + 1
    if entry is not None:  # a hit (counted as clock - misses)
        entry.used = clock
        _LAST[0] = entry
        return entry.plan_for(rpi, prefix, extend), entry
    _STATS["misses"] += 1
    kw = _as_kwargs(rpi, prefix, extend, t, lut, a, b, c, d, e, f, swa, cap)
    plan = validate_launch(**kw)
    entry = BufferSet(kw, plan)
    entry.used = clock
    _MEMO[key] = entry
    _LAST[0] = entry
    if len(_MEMO) > MAX_ENTRIES:  # evict the least recently used (a scan, on a miss only)
        del _MEMO[min(_MEMO, key=lambda k: _MEMO[k].used)]
    return plan, entry


def _as_kwargs(*args) -> dict:
    return dict(zip(ARGUMENT_NAMES, args))


def validate_mapping(launcher_kwargs: dict) -> LaunchPlan:
    """:func:`impls.offsets_planner.validate.validate_launch` of a dict of the 13 arguments, memoised (same
    returns and raises; see :func:`lookup`)."""
    return lookup(launcher_kwargs)[0]


def validate_launch_cached(**launcher_kwargs) -> LaunchPlan:
    """:func:`validate_mapping` of the keyword arguments."""
    return lookup(launcher_kwargs)[0]


def clear() -> None:
    """Forget every buffer set (tests; or to release the tensors the memo keeps alive)."""
    _MEMO.clear()
    _LAST[0] = None


def entries() -> int:
    """Buffer sets held now (at most :data:`MAX_ENTRIES`)."""
    return len(_MEMO)


def stats() -> dict[str, int]:
    """Counters since import: ``hits`` and ``misses`` (buffer sets found / validated in full),
    ``request_misses`` (per-step checks that failed, so the full validator ran) and ``bypass``
    (calls the memo could not key)."""
    counts = dict(_STATS)
    counts["hits"] = _CLOCK[0] - counts["misses"]
    return counts
