from impls.offsets_planner.probe import *  # noqa: F401,F403
