from impls.offsets_planner.contract import *  # noqa: F401,F403
