"""``python -m conformance --help`` and each subcommand's ``--help`` read as a user's text: the
command modules' docstrings without the reStructuredText markup a terminal prints literally
(````x````, ``:mod:`x```), no note meant for the module's maintainers, and a line for each option
a user must choose a value of."""

from __future__ import annotations

import pytest

from conformance.cli import main as cli_main
from conformance.corpus.text import help_text

COMMANDS = ["planners", "cases", "record", "report", "fuzz", "bench", "manifest", "repro",
            "mutants", "upstream", "upstream-entries", "upstream-launchers"]


def _help(capsys, *argv: str) -> str:
    with pytest.raises(SystemExit) as stop:
        cli_main([*argv, "--help"])
    assert stop.value.code == 0
    return capsys.readouterr().out


def test_help_text_takes_the_markup_out():
    assert help_text("``report`` reads :mod:`conformance.upstream.entries_tree` and "
                     ":func:`~conformance.engine.step_error.error_difference`") == (
        "report reads conformance.upstream.entries_tree and "
        "conformance.engine.step_error.error_difference")
    assert help_text(None) == ""


@pytest.mark.parametrize("argv", [[], *([c] for c in COMMANDS)], ids=["main", *COMMANDS])
def test_no_help_page_shows_markup(argv, capsys):
    text = _help(capsys, *argv)
    assert "``" not in text and ":mod:`" not in text, text


def test_the_report_help_says_what_the_command_does(capsys):
    text = _help(capsys, "report")
    description = text.split("\n\n")[1]
    assert description == ("A results file as an HTML page, Markdown or text; or what changed "
                           "between two runs.")
    assert "dispatch only" not in text
    assert "RESULTS defaults to reports/out/results.json (written by every pytest conformance/ " \
           "run)." in " ".join(text.split())


def test_options_that_take_a_value_say_what_it_is(capsys):
    report = " ".join(_help(capsys, "report").split())
    assert ("--format {html,markdown,text} html (default: a page written to --out, "
            "reports/report.html), or markdown / text (standard output unless --out is given)"
            in report)
    cases = " ".join(_help(capsys, "cases").split())
    assert "--tag TAG only the cases that carry this tag (hazard, swa, ...)" in cases
    record = " ".join(_help(capsys, "record").split())
    assert "ID case id (python -m conformance cases lists them)" in record
