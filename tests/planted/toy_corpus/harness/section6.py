from impls.offsets_planner.harness.section6 import *  # noqa: F401,F403
