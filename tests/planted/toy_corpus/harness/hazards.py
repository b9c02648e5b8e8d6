from impls.offsets_planner.harness.hazards import *  # noqa: F401,F403
