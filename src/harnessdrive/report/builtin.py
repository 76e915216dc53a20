"""harnessdrive's own report renderers, registered through the same hook as a plugin's."""

from __future__ import annotations

from harnessdrive.plugins.hookspecs import hookimpl
from harnessdrive.report.html import render_html
from harnessdrive.report.markdown import render_markdown
from harnessdrive.report.render import render_report
from harnessdrive.report.renderers import Reporter
from harnessdrive.report.scoreboard import Report


def _json(report: Report) -> str:
    return report.to_json()


@hookimpl
def harnessdrive_reporters() -> list[Reporter]:
    return [
        Reporter("text", render_report, "the scoreboard tables (plain text in a pipe)"),
        Reporter("json", _json, "the report as JSON (docs/report.md)", details=True),
        Reporter("markdown", render_markdown, "the scoreboard tables as markdown"),
        Reporter(
            "html",
            render_html,
            "one self-contained HTML page (docs/report.md)",
            details=True,
            default_file="report.html",
        ),
    ]
