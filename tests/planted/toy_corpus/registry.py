from impls.offsets_planner.registry import *  # noqa: F401,F403
