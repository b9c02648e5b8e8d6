"""The bench's own clocks, bound when this module is imported, and the checks of a timed loop.

Imported by :mod:`conformance.bench.plugin` (a ``pytest_plugins`` entry), so before any planner is
imported (the bench resolves a planner, importing an external one's module, when its first
benchmark runs): a planner that rebinds ``time.perf_counter`` or ``torch.cuda.Event.elapsed_time``
at import (a published reward hack: gpu-mode/reference-kernels#162) changes names the bench no
longer reads, and is seen rebinding them.

* :func:`tampered`: which watched names (the clocks, the CUDA event methods, pytest-benchmark's
  runner and statistics, this module's own checks, every name another bench module registers
  with :func:`watch`, every global of a module registered with :func:`watch_globals` -- the
  judge's and the reference planner's, with the builtins their code reads -- and every dict
  entry registered with :func:`watch_entry`: the floors' kernel modules in ``sys.modules``) no
  longer hold what they held when bound, and which watched objects' own state changed
  (:func:`watch_state`: the floors' kernel objects, their hook lists and instance attributes).
  The bench checks it after it resolves a planner (before the planner's first call) and after
  every timed loop.
* The real clock functions are also captured where no rebinding of a name reaches them: as default
  arguments of :func:`synced_ns` and :meth:`RoundClock.__call__`, bound when this module (and the
  one it takes :class:`RoundClock` from) is imported (before any planner is). A planner that
  rebinds a clock and puts it back before the loop ends is not seen by :func:`tampered`, but it
  cannot change these brackets either.
* :class:`RoundClock` (the timer of a timed loop's rounds) and :func:`loop_mismatch` (the checks
  of its figures) come from :mod:`conformance.bench.round_clock`, bound here and watched under
  this module's names.

The bench times a planner in its own process (pytest's): the planner registry's ``get_planner``
(the corpus subject's ``registry``) imports an external planner's module there, so the planner's
code runs beside the clocks, the statistics and the re-judging. What it can still do there --
change these functions' default arguments or code objects, empty the watch list, replace a round's
timer and its bracket together on the heap, read the judge's seed -- is outside what this module
can see; README "Benchmarks" says so.
"""

from __future__ import annotations

import builtins
import os
import random
import sys
import time
import types

import torch
from pytest_benchmark import fixture as _pb_fixture
from pytest_benchmark import stats as _pb_stats

from conformance.bench.round_clock import (  # noqa: F401 (bound here: the bench reads clocks.*)
    MATCH_REL, WALL_ABS_S, WALL_REL, RoundClock, loop_mismatch)

perf_counter = time.perf_counter
perf_counter_ns = time.perf_counter_ns
cuda_synchronize = torch.cuda.synchronize
elapsed_time = torch.cuda.Event.elapsed_time
monotonic_ns = time.monotonic_ns
"""The independent clock each round is cross-checked with (host ns)."""
CUDA = torch.cuda.is_available()
_SELF = sys.modules[__name__]

_WATCHED = (
    ("time.perf_counter", time, "perf_counter"),
    ("time.perf_counter_ns", time, "perf_counter_ns"),
    ("time.monotonic", time, "monotonic"),
    ("time.monotonic_ns", time, "monotonic_ns"),
    ("time.time", time, "time"),
    ("os.urandom", os, "urandom"),  # the judge's seed and draws (conformance.bench.rejudge)
    ("random.Random", random, "Random"),
    ("torch.cuda.synchronize", torch.cuda, "synchronize"),
    ("torch.cuda.Event", torch.cuda, "Event"),
    ("torch.cuda.Event.elapsed_time", torch.cuda.Event, "elapsed_time"),
    ("torch.cuda.Event.record", torch.cuda.Event, "record"),
    ("torch.cuda.Event.synchronize", torch.cuda.Event, "synchronize"),
    ("pytest_benchmark BenchmarkFixture._make_runner", _pb_fixture.BenchmarkFixture,
     "_make_runner"),
    ("pytest_benchmark BenchmarkFixture._raw_pedantic", _pb_fixture.BenchmarkFixture,
     "_raw_pedantic"),
    ("pytest_benchmark Stats.update", _pb_stats.Stats, "update"),
    ("pytest_benchmark Stats.median", _pb_stats.Stats, "median"),
    ("pytest_benchmark Stats.min", _pb_stats.Stats, "min"),
    *((f"{__name__}.{name}", _SELF, name)
      for name in ("perf_counter", "perf_counter_ns", "cuda_synchronize", "elapsed_time",
                   "monotonic_ns", "synced_ns", "tampered", "watch", "watch_entry",
                   "watch_globals", "watch_state", "watches", "loop_mismatch", "RoundClock",
                   "ObjectState", "_value", "_resolve", "_code_reads")),
    (f"{__name__}.RoundClock.__call__", "RoundClock", "__call__"),
    (f"{__name__}.RoundClock.rounds_s", "RoundClock", "rounds_s"),
    (f"{__name__}.ObjectState.changed", "ObjectState", "changed"),
)
_WATCH: list[tuple[str, object, str, object]] = []
"""(name, owner, attribute, value when bound) of every watched name: :data:`_WATCHED` at the end
of this module's import, then what :func:`watch` and :func:`watch_entry` add (for an entry: the
dict, its key, the object it held)."""


def _value(owner, attr):
    if type(owner) is dict:  # a watched entry (:func:`watch_entry`)
        return owner.get(attr)
    return vars(owner).get(attr, getattr(owner, attr, None))


def watch(module, *names: str) -> None:
    """Watch ``module``'s ``names`` from now on: :func:`tampered` names any that is rebound later.
    A bench module calls it at its import for the clocks, timers and judges it holds (before any
    planner is imported). A dotted name (``"RoundJudge.__call__"``) watches a class attribute.

    Raises:
        AttributeError: a dotted name's owner does not exist.
    """
    for name in names:
        owner, _, attr = name.rpartition(".")
        holder = module
        for part in filter(None, owner.split(".")):
            holder = getattr(holder, part)
        _WATCH.append((f"{module.__name__}.{name}", holder, attr, _value(holder, attr)))


def watch_entry(name: str, mapping: dict, key) -> None:
    """Watch ``mapping[key]`` (an exact dict: ``sys.modules``, a module's record) from now on,
    reported as ``name``: :func:`tampered` names it once the key holds another object or none."""
    if type(mapping) is not dict:
        raise TypeError(f"{name}: watched entries are of exact dicts, not {type(mapping)}")
    _WATCH.append((name, mapping, key, mapping.get(key)))


def _code_reads(module) -> set[str]:
    """Every name the code of ``module``'s own functions and classes (methods, nested functions
    and comprehensions included) reads by name or attribute (``co_names``)."""
    codes, reads = [], set()
    for value in list(vars(module).values()):
        if getattr(value, "__module__", None) != module.__name__:
            continue
        members = list(vars(value).values()) if isinstance(value, type) else [value]
        for member in members:
            member = getattr(member, "__func__", getattr(member, "fget", member))
            code = getattr(member, "__code__", None)
            if type(code) is types.CodeType:
                codes.append(code)
    while codes:
        code = codes.pop()
        reads.update(code.co_names)
        codes.extend(c for c in code.co_consts if type(c) is types.CodeType)
    return reads


def watch_globals(module, *also: str) -> None:
    """Watch every global name of ``module`` (dunder names aside) and ``also`` (dotted names:
    class attributes, as :func:`watch` takes them), and every builtin its functions read by name:
    in ``module`` (a global of that name added later would shadow the builtin) and in
    :mod:`builtins`. For a module whose functions reach one another through its globals (the
    reference planner the judge calls, the judge itself): a helper rebound there changes what they
    compute. Names already watched in ``module`` are not added twice."""
    names = vars(module)
    reads = _code_reads(module)
    shadowing = sorted(n for n in reads if n not in names and n in vars(builtins))
    known = {attr for _, holder, attr, _ in _WATCH if holder is module}
    watch(module, *(n for n in [*names, *shadowing, *also] if n not in known
                    and not (n.startswith("__") and n.endswith("__"))))
    known = {attr for _, holder, attr, _ in _WATCH if holder is builtins}
    watch(builtins, *(n for n in shadowing if n not in known))


_MISSING = object()


def _resolve(class_dicts: tuple, name: str):
    """``name`` as the first of ``class_dicts`` (a class's ``__mro__`` dicts) holding it has it."""
    for names in class_dicts:
        if name in names:
            return names[name]
    return _MISSING


class ObjectState:
    """What an object the bench calls (a floor's kernel) holds in itself, as when this was made.

    Checked by :meth:`changed`: the object's class and method resolution order; the identity of
    every instance attribute it had then (``rebound`` aside: names its framework rebinds itself
    when it first compiles or launches); the items of each of those that is a list (a kernel's
    pre-run hook list); no instance attribute made since that shadows a class attribute (an
    instance ``run``); and every class attribute it resolves (any class of its MRO rebinding one).
    Dicts are not read item by item: a kernel's caches fill as it compiles. A new instance
    attribute that no class attribute is named as is not checked either (a framework makes
    some on the first compile).
    """

    def __init__(self, name: str, obj, rebound=()) -> None:
        self.name, self.obj, self.rebound = name, obj, frozenset(rebound)
        self.cls = type(obj)
        self.mro = self.cls.__mro__
        self.class_dicts = tuple(vars(k) for k in self.mro)  # live views of each class's dict
        self.class_names = tuple(sorted({n for d in self.class_dicts for n in d}
                                        | {"__getattr__"}))
        self.class_values = tuple(_resolve(self.class_dicts, n) for n in self.class_names)
        self.shadowable = frozenset(self.class_names)
        self.attrs = {n: v for n, v in vars(obj).items() if n not in self.rebound}
        self.lists = {n: tuple(v) for n, v in self.attrs.items() if type(v) is list}

    def changed(self, _type=type, _vars=vars, _len=len, _zip=zip) -> list[str]:
        """What differs from when this was made: ``__class__``, an instance attribute's name, or
        ``__class__.NAME`` for a class attribute (empty: nothing)."""
        obj = self.obj
        mro = self.cls.__mro__
        if _type(obj) is not self.cls or _len(mro) != _len(self.mro) or any(
                a is not b for a, b in _zip(mro, self.mro)):
            return ["__class__"]
        now = _vars(obj)
        out = [n for n, v in self.attrs.items() if now.get(n, _MISSING) is not v]
        out += [n for n, items in self.lists.items() if n not in out and (
            _len(now[n]) != _len(items) or any(a is not b for a, b in _zip(now[n], items)))]
        out += [n for n in now if n in self.shadowable and n not in self.attrs
                and n not in self.rebound]
        out += [f"__class__.{n}" for n, v in _zip(self.class_names, self.class_values)
                if _resolve(self.class_dicts, n) is not v]
        return out


_STATES: list[ObjectState] = []
"""Every object whose state is watched (:func:`watch_state`)."""


def watch_state(name: str, obj, rebound=()) -> None:
    """Watch ``obj``'s own state from now on (:class:`ObjectState`), reported as ``name``:
    :func:`tampered` names ``NAME.PART`` for each part changed later (``NAME.pre_run_hooks``,
    ``NAME.run``). The floors' kernel modules call it at their import for each kernel object
    (before any planner is imported): a kernel slowed through its state (a pre-run hook, an
    instance ``run``) while its name still holds it."""
    _STATES.append(ObjectState(name, obj, rebound))


def watches(owner) -> bool:
    """Whether a name of ``owner`` (a module or a class) is on the watch list (:func:`watch`)."""
    return any(holder is owner for _, holder, _, _ in _WATCH)


def tampered(_read=_value) -> list[str]:
    """The watched names (module docstring) whose value is no longer the one bound at import
    (read by :func:`_value` as bound at import), then the parts of watched objects' state that
    changed (:func:`watch_state`)."""
    return [*(name for name, owner, attr, orig in _WATCH if _read(owner, attr) is not orig),
            *(f"{state.name}.{part}" for state in _STATES for part in state.changed())]


def synced_ns(_sync=torch.cuda.synchronize, _ns=time.perf_counter_ns, _cuda=CUDA) -> int:
    """Host ns from the real ``perf_counter_ns`` after the real ``torch.cuda.synchronize()`` (with
    CUDA), both captured at import: ns that include every stream's queued work."""
    if _cuda:
        _sync()
    return _ns()


def _bind_watched() -> None:
    """Record the value of every name of :data:`_WATCHED` (the module's last statement)."""
    for name, owner, attr in _WATCHED:
        owner = globals()[owner] if isinstance(owner, str) else owner
        _WATCH.append((name, owner, attr, _value(owner, attr)))


_bind_watched()
