from impls.offsets_planner.constants import *  # noqa: F401,F403
