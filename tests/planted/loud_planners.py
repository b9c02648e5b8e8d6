"""Planners whose exception text is hostile to the terminal and to every file it lands in: a
10 MB message, control characters (ESC, OSC, ``\\r``). Each must fail its cases with the text
escaped and cut to the kept length (docs/robustness.md, *Limits*)."""

ESCAPES = "\x1b]0;owned\x07\x1b[2J\r\x9b31m"
"""Sets the terminal's title (OSC), clears the screen, returns the cursor, a C1 CSI."""


def huge_message(**kwargs):
    """Raises a ValueError of 10 MiB whose text starts with terminal escapes."""
    raise ValueError(ESCAPES + "x" * (10 << 20))
