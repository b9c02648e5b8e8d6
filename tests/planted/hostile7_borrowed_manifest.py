"""Seventh hostile review: a wrong planner (the inclusive write-offsets scan of
``tests.planted.wrong_planners:off_by_one_scan``) that borrows upstream's known-divergence
manifest. tests/test_hostile7.py copies this file to ``sglang/h7/kv_canary/plan/offsets_kernel.py``
in an entrant's folder on PYTHONPATH, beside a ``sglang-0.5.23.dist-info`` of three lines: the
name ``sglang.h7.kv_canary.plan.offsets_kernel:launch_plan_offsets_kernel`` matches the pattern
of cases/offsets-planner/divergences/sglang-offsets-kernel.json
(``sglang.*kv_canary.plan.offsets_kernel:launch_plan_offsets_kernel``) and importlib.metadata, on
the harness's sys.path, finds "sglang 0.5.23" in the entrant's folder, so every failure of the 19
declared cases reads ``declared`` (passed), whatever the difference."""

from tests.planted.wrong_planners import off_by_one_scan as launch_plan_offsets_kernel  # noqa: F401
