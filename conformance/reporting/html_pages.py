"""The Jinja2 environment of the HTML pages (``report``, ``report --compare``): the templates of
this package, autoescape on, and every value an expression prints with its control and format
characters escaped (:func:`~conformance.corpus.case_file.visible`): a bidi override in a planner's
message cannot reverse the page's own words after it, an ESC or CR shows as text."""

from __future__ import annotations

import jinja2
import markupsafe

from conformance.corpus.case_file import visible


def _finalize(value):
    if isinstance(value, markupsafe.Markup):  # HTML the harness built: its text shows too
        return markupsafe.Markup(visible(str(value)))
    if isinstance(value, str):
        return visible(value)
    return value


def environment() -> jinja2.Environment:
    """The environment both pages render with."""
    return jinja2.Environment(loader=jinja2.PackageLoader("conformance.reporting", "templates"),
                              autoescape=True, trim_blocks=True, lstrip_blocks=True,
                              finalize=_finalize)
