"""Upstream's whole-plan launchers behind this project's flat launcher (spec
``docs/spec/canary-plan.md`` section 3), so that the harness judges them on this subject's cases.

sglang 0.5.23 has two launchers of one signature: the wrapper ``launch_canary_plan_kernels``
(``sglang/kernels/ops/kv_canary/plan/api.py``: its SWA check, then, on a device that is not CUDA,
the torch reference; on CUDA the Triton offsets kernel and the JIT entries kernel) and the torch
reference ``launch_canary_plan_kernels_torch_reference`` (``plan_ref.py``). Both take the plan
records ``verify_plan_out`` (``VerifyPlan``, ``verify.py``) and ``write_plan_out`` (``WritePlan``,
``write.py``) where this project's launcher takes each record's fields as keywords of their own
(:mod:`impls.canary_plan.contract`); every other keyword is passed on unchanged.

Nothing here imports sglang: :func:`upstream_launchers` is given the import function of a process
whose path holds a release's laid-out files.
"""

from __future__ import annotations

from collections.abc import Callable

from impls.canary_plan.contract import VERIFY_FIELDS, WRITE_FIELDS

PACKAGE = "sglang.kernels.ops.kv_canary"
LAUNCHERS: dict[str, tuple[str, str]] = {
    "reference": (f"{PACKAGE}.plan_ref", "launch_canary_plan_kernels_torch_reference"),
    "wrapper": (f"{PACKAGE}.plan.api", "launch_canary_plan_kernels"),
}
"""Upstream's whole-plan launchers: name -> (module, function)."""
RECORDS: dict[str, tuple[str, str, tuple[str, ...]]] = {
    "verify_plan_out": (f"{PACKAGE}.verify", "VerifyPlan", VERIFY_FIELDS),
    "write_plan_out": (f"{PACKAGE}.write", "WritePlan", WRITE_FIELDS),
}
"""Upstream's plan records: keyword -> (module, class, the fields it is built from, in order)."""


def flat_launcher(launch: Callable[..., None], records: dict[str, type]) -> Callable[..., None]:
    """A launcher taking this project's flat keywords that builds each of ``records``
    ({keyword: record class}, :data:`RECORDS`' keywords) from its fields' tensors (the very
    tensors given, never copies) and calls ``launch`` with the records and the other keywords;
    returns what ``launch`` returns and lets what it raises through."""
    fields = {keyword: RECORDS[keyword][2] for keyword in records}

    def flat(**kwargs):
        built = {keyword: cls(**{name: kwargs.pop(name) for name in fields[keyword]})
                 for keyword, cls in records.items()}
        return launch(**built, **kwargs)

    flat.__name__ = flat.__qualname__ = f"flat_{getattr(launch, '__name__', 'launcher')}"
    return flat


def upstream_launchers(import_module: Callable[[str], object],
                       names: tuple[str, ...] = tuple(LAUNCHERS)) -> dict[str, Callable[..., None]]:
    """{name: flat launcher} of upstream's launchers ``names`` (keys of :data:`LAUNCHERS`),
    imported with ``import_module`` (``importlib.import_module`` in a process whose path holds a
    release's files).

    Raises:
        ImportError: a module the release lacks, or one of its imports missing here.
        AttributeError: a module without the function or record class.
    """
    records = {keyword: getattr(import_module(module), cls)
               for keyword, (module, cls, _) in RECORDS.items()}
    out = {}
    for name in names:
        module, function = LAUNCHERS[name]
        out[name] = flat_launcher(getattr(import_module(module), function), records)
    return out
