"""compute-sanitizer (NVIDIA's CUDA toolkit) around the isolation worker: the command prefix, the
checks that it can run here, and a pure parser of what ``--tool memcheck`` prints.

memcheck prints one block per access error, every line prefixed by ``=========`` (the format of
compute-sanitizer's user manual, section "Understanding Memcheck Errors")::

    ========= Invalid __global__ read of size 4 bytes
    =========     at _plan_offsets_kernel+0x1f0
    =========     by thread (3,0,0) in block (0,0,0)
    =========     Address 0x7f3c0e000240 is out of bounds
    =========     and is 8 bytes after the nearest allocation at 0x7f3c0e000200 of size 64 bytes

and at process exit ``========= ERROR SUMMARY: N errors``. :func:`parse_memcheck` turns such text
into :class:`AccessError` records; the isolation worker prints a marker line before and after
each case into the same stream, so every record is tied to the case that was running
(:mod:`conformance.robustness.isolation`).
"""

from __future__ import annotations

import os
import re
import shutil
from dataclasses import asdict, dataclass
from pathlib import Path

TOOLS = ("memcheck",)
"""The ``--sanitize`` tools the harness can attribute per case."""
PREFIX = "========="
_HEAD = re.compile(r"^=+ (Invalid (?:__(?P<space>\w+?)__ )?(?P<op>read|write|atomic)"
                   r"(?: of size (?P<size>\d+) bytes?)?)\s*$")
_OTHER = re.compile(r"^=+ ((?:Misaligned|Out-of-range|Malloc/Free|Hardware|Warp|Illegal|"
                    r"Stack overflow)[^\n]*?)\s*$")
_API = re.compile(r"^=+ (?:Program hit|Cuda API)")
"""A host-side CUDA API error (the echo of a kernel fault): not an access error itself."""
_AT = re.compile(r"^=+\s+at (?P<at>\S+)")
_THREAD = re.compile(r"^=+\s+by thread (?P<thread>\(\d+,\d+,\d+\)) in block (?P<block>\(\d+,\d+,\d+\))")
_ADDRESS = re.compile(r"^=+\s+Address (?P<address>0x[0-9a-fA-F]+) (?P<what>.*?)\s*$")
_NEAREST = re.compile(r"^=+\s+and is (?P<distance>\d+) bytes? (?P<side>after|before) the nearest "
                      r"allocation at (?P<base>0x[0-9a-fA-F]+) of size (?P<alloc>\d+) bytes?")
_SUMMARY = re.compile(r"^=+ ERROR SUMMARY: (?P<count>\d+) errors?")


class SanitizerUnavailable(RuntimeError):
    """``--sanitize`` cannot run here (no compute-sanitizer, or no CUDA device); the message says
    what is missing and what to do."""


@dataclass
class AccessError:
    """One error block of memcheck's output.

    Attributes:
        kind: the head line without the prefix, e.g. ``Invalid __global__ read of size 4 bytes``.
        op: ``read``, ``write`` or ``atomic``; None for other errors (misaligned, hardware ...).
        size: bytes accessed (None when the head does not say).
        kernel: the ``at`` frame, e.g. ``_plan_offsets_kernel+0x1f0``.
        thread, block: ``(x,y,z)`` of the faulting thread.
        address: the faulting address (hex text).
        distance, side, allocation: how far (bytes) ``after`` / ``before`` the nearest allocation,
            and that allocation's ``base`` (hex) and ``size`` (bytes); None when not printed.
        lines: the block as printed (prefix stripped), for the report.
    """

    kind: str
    op: str | None = None
    size: int | None = None
    kernel: str | None = None
    thread: str | None = None
    block: str | None = None
    address: str | None = None
    distance: int | None = None
    side: str | None = None
    allocation: dict | None = None
    lines: list[str] | None = None

    def summary(self) -> str:
        """One line: ``Invalid __global__ read of size 4 bytes at K by thread ... : 8 bytes after
        the nearest allocation (64 bytes at 0x...)``."""
        text = self.kind
        if self.kernel:
            text += f" at {self.kernel}"
        if self.thread:
            text += f" by thread {self.thread} in block {self.block}"
        if self.address:
            text += f", address {self.address}"
        if self.distance is not None:
            text += (f": {self.distance} bytes {self.side} the nearest allocation "
                     f"({self.allocation['size']} bytes at {self.allocation['base']})")
        return text

    def to_json(self) -> dict:
        return asdict(self)


def parse_memcheck(text: str) -> tuple[list[AccessError], int | None]:
    """The access errors in compute-sanitizer memcheck output ``text``, and the ERROR SUMMARY count
    (None when the text has no summary line, e.g. a section cut at a case boundary).

    Lines without ``=========`` (the program's own output) are ignored; a line is read from its
    last ``=========``, since the program shares the log and text it left without a newline runs
    into the sanitizer's next line (one write, so never into the middle of it).
    """
    errors: list[AccessError] = []
    summary = None
    current: AccessError | None = None
    for raw in text.splitlines():
        at = raw.rfind(PREFIX)
        if at < 0:
            continue
        line = raw[at:].rstrip()
        if m := _SUMMARY.match(line):
            summary, current = int(m["count"]), None
        elif m := _HEAD.match(line):
            current = AccessError(kind=m[1], op=m["op"], size=int(m["size"]) if m["size"] else None,
                                  lines=[])
            errors.append(current)
        elif _API.match(line):
            current = None
            continue
        elif m := _OTHER.match(line):
            current = AccessError(kind=m[1], lines=[])
            errors.append(current)
        elif current is not None:
            if m := _AT.match(line):
                current.kernel = current.kernel or m["at"]
            elif m := _THREAD.match(line):
                current.thread, current.block = m["thread"], m["block"]
            elif m := _ADDRESS.match(line):
                current.address = m["address"]
            elif m := _NEAREST.match(line):
                current.distance, current.side = int(m["distance"]), m["side"]
                current.allocation = {"base": m["base"], "size": int(m["alloc"])}
            elif line.strip("= ") == "":
                current = None  # a blank separator ends the block
                continue
        if current is not None:
            current.lines.append(line[len(PREFIX):].rstrip())
    return errors, summary


def find_sanitizer() -> str:
    """The compute-sanitizer executable: on ``PATH``, else under ``$CUDA_HOME/bin`` or
    ``/usr/local/cuda/bin``.

    Raises:
        SanitizerUnavailable: none found (the message says where it looked).
    """
    found = shutil.which("compute-sanitizer")
    if found:
        return found
    for root in (os.environ.get("CUDA_HOME"), "/usr/local/cuda"):
        if root and (Path(root) / "bin" / "compute-sanitizer").is_file():
            return str(Path(root) / "bin" / "compute-sanitizer")
    raise SanitizerUnavailable(
        "--sanitize: compute-sanitizer not found on PATH, in $CUDA_HOME/bin or /usr/local/cuda/bin "
        "(it ships with the CUDA toolkit); no case was run unsanitized")


def sanitizer_prefix(tool: str, executable: str) -> list[str]:
    """The argv that runs a command under ``compute-sanitizer --tool TOOL``.

    ``--destroy-on-device-error kernel`` keeps the CUDA context after an access error, so one
    worker serves the next case; ``--show-backtrace device`` keeps each block short;
    ``--print-limit 1000`` reports many errors per process (the default stops at 100).
    """
    if tool not in TOOLS:
        raise SanitizerUnavailable(f"--sanitize {tool}: unknown tool; use one of {', '.join(TOOLS)}")
    return [executable, "--tool", tool, "--target-processes", "all",
            "--destroy-on-device-error", "kernel", "--show-backtrace", "device",
            "--print-limit", "1000"]
