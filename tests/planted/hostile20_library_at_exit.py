"""A library, not a planner: like a GPU array library (CuPy frees its memory pools at exit), it
registers an ``atexit`` handler when first imported (tests/test_hostile20_import.py). Harmless:
its handler does nothing but count."""

import atexit

CALLS: list[int] = []


@atexit.register
def _release_pools() -> None:
    CALLS.append(1)
