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


def _seconds(text: str, zero_ok: bool) -> float:
    """A number of seconds from ``text``: > 0, or finite and >= 0 when ``zero_ok`` (nan refused).

    Raises:
        argparse.ArgumentTypeError: not a number, or out of that range.
    """
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    ok = 0 <= value < float("inf") if zero_ok else value > 0  # nan is neither
    if not ok:
        bound = ">= 0" if zero_ok else "> 0"
        raise argparse.ArgumentTypeError(f"{text!r}: must be a number of seconds {bound}")
    return value


def positive_seconds(text: str) -> float:
    """argparse type of ``--isolate-timeout`` (pytest and ``fuzz``): a number of seconds > 0."""
    return _seconds(text, zero_ok=False)


def seconds_at_least_zero(text: str) -> float:
    """argparse type of ``--isolate-linger``: a finite number of seconds >= 0."""
    return _seconds(text, zero_ok=True)
