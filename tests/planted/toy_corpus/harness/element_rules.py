from impls.offsets_planner.harness.element_rules import *  # noqa: F401,F403
