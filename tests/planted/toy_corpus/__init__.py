"""A toy second corpus subject (tests/test_subject_move_attacks.py): the offsets planner\x27s modules under another NAME."""
