"""A pytest plugin (``-p tests.planted.numba_missing``) that makes ``import numba`` fail, as it does
on an image whose numba does not support its numpy: the numba built-in planners are then
unavailable, which the run must report as skips with the reason, never as an internal error."""

import sys

sys.modules["numba"] = None  # the import system raises ModuleNotFoundError for a None entry
