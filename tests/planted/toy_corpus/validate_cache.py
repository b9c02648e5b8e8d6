from impls.offsets_planner.validate_cache import *  # noqa: F401,F403
