from impls.offsets_planner.errors import *  # noqa: F401,F403
