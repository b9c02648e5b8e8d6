"""A planner whose module's top level replaces the reference planner and fuzz's comparison with
its own in whatever process imports it (tests/test_hostile23.py), and that writes nothing: in
a process that judged it, every plan would agree. ``python -m conformance fuzz`` imports no
planner under test: the module runs in the availability probe and the worker only."""

from __future__ import annotations


def _patch_everything() -> None:
    def agree(*args, **kwargs):
        return None

    import impls.offsets_planner.python_planner as reference

    reference.launch = lambda **kw: None  # the golden: nothing written either
    for module, names in (("conformance.robustness.plan_divergence", ("divergence", "_failing")),
                          ("conformance.robustness.fuzz", ("divergence",)),
                          ("conformance.engine.runner", ("run_case", "judge")),
                          ("conformance.robustness.isolated_case", ("judge_observed",))):
        try:
            mod = __import__(module, fromlist=["_"])
        except Exception:
            continue
        for name in names:
            setattr(mod, name, agree)


_patch_everything()


def patches_the_judge(**kwargs) -> None:
    """Plans nothing (its module patched the judge wherever it was imported)."""
    return None
