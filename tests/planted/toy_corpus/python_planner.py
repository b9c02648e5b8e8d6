from impls.offsets_planner.python_planner import *  # noqa: F401,F403
