from impls.offsets_planner.buffers import *  # noqa: F401,F403
