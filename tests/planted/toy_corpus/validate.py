from impls.offsets_planner.validate import *  # noqa: F401,F403
