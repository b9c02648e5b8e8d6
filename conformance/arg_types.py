"""argparse types shared by the commands (``python -m conformance ...``) and the pytest options:
a leaf (it imports nothing from the harness)."""

from __future__ import annotations

import argparse


def positive_int(text: str) -> int:
    """argparse type: an integer of at least 1.

    Raises:
        argparse.ArgumentTypeError: not an integer, or below 1.
    """
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value
