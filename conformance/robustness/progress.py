"""A dependency-free progress bar on stderr for long runs (``python -m conformance fuzz``).

On a terminal it redraws one line (``\\r``) at most ten times a second; otherwise (CI logs, pipes)
it prints a plain line at every 10 % so logs stay short. Nothing is written to stdout.
"""

from __future__ import annotations

import sys
import time


class Progress:
    """``with Progress(total, "fuzz") as bar: ... bar.update(note="triton 0")``."""

    def __init__(self, total: int, label: str, stream=None, enabled: bool = True) -> None:
        self.total, self.label, self.done = max(total, 0), label, 0
        self.stream = stream or sys.stderr
        self.enabled = enabled and self.total > 0
        self.tty = hasattr(self.stream, "isatty") and self.stream.isatty()
        self.start = self._last = time.monotonic()
        self._next_decile = 1

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, *exc) -> None:
        if self.enabled and self.tty:
            self.stream.write("\n")
            self.stream.flush()

    def line(self, note: str = "") -> str:
        """The bar as text: ``label [#####.....] done/total  rate/s  eta  note``."""
        width = 30
        filled = width * self.done // self.total if self.total else width
        elapsed = time.monotonic() - self.start
        rate = self.done / elapsed if elapsed > 0 else 0.0
        eta = (self.total - self.done) / rate if rate > 0 else 0.0
        return (f"{self.label} [{'#' * filled}{'.' * (width - filled)}] {self.done}/{self.total}"
                f"  {rate:.1f}/s  eta {eta:.0f}s  {note}").rstrip()

    def update(self, n: int = 1, note: str = "") -> None:
        self.done += n
        if not self.enabled:
            return
        now = time.monotonic()
        if self.tty:
            if now - self._last >= 0.1 or self.done >= self.total:
                self._last = now
                self.stream.write("\r" + self.line(note) + "\033[K")
                self.stream.flush()
        elif self.done * 10 >= self._next_decile * self.total:
            while self.done * 10 >= self._next_decile * self.total:
                self._next_decile += 1
            self.stream.write(self.line(note) + "\n")
            self.stream.flush()
