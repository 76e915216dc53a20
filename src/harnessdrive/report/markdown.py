"""The scoreboard as markdown (a pull-request comment, a CI summary): the same tables and lines
as the terminal scoreboard, each cell escaped so no name or message can add markup."""

from __future__ import annotations

import re

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from harnessdrive.report.fitting import Fitted
from harnessdrive.report.render import render_report
from harnessdrive.report.scoreboard import Report

_MARKUP = re.compile(r"([\\`*_\[\]<>|~!#&])")
_LIST_START = re.compile(r"^(\s*)([-+=])")
_NUMBERED_START = re.compile(r"^(\s*\d+)([.)])")
_LINE_BREAKS = re.compile(r"[\x00-\x1f\x7f\u2028\u2029]+")


def render_markdown(report: Report) -> str:
    """``report`` as markdown: each table of the scoreboard a markdown table under its title."""
    blocks = [_block(part) for part in _parts(render_report(report))]
    return "\n\n".join(block for block in blocks if block)


def escape(text: str) -> str:
    """Literal text inside a line (a table cell): markup escaped, line breaks made spaces."""
    return _MARKUP.sub(r"\\\1", _LINE_BREAKS.sub(" ", text))


def _paragraph_line(text: str) -> str:
    """A literal line of its own: it cannot start a list, a heading or a rule either."""
    escaped = _LIST_START.sub(r"\1\\\2", escape(text))
    return _NUMBERED_START.sub(r"\1\\\2", escaped)


def _parts(renderable: RenderableType) -> list[RenderableType]:
    if isinstance(renderable, Group):
        return [part for item in renderable.renderables for part in _parts(item)]
    if isinstance(renderable, Fitted):
        # A page has no width to fit: every table in its widest layout.
        return [renderable.widest()]
    return [renderable]


def _block(part: RenderableType) -> str:
    if isinstance(part, Table):
        return _table(part)
    text = part.plain if isinstance(part, Text) else str(part)
    return "\n".join(_paragraph_line(line) for line in text.splitlines())


def _table(table: Table) -> str:
    headers = [escape(_plain(column.header)) for column in table.columns]
    cells = [[escape(_plain(cell)) for cell in column.cells] for column in table.columns]
    rows = [list(row) for row in zip(*cells, strict=True)]
    lines = []
    if table.title:
        lines += [f"### {escape(_plain(table.title))}", ""]
    lines.append("| " + " | ".join(headers) + " |")
    lines.append(
        "|" + "|".join("---:" if c.justify == "right" else "---" for c in table.columns) + "|"
    )
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


def _plain(value: object) -> str:
    return value.plain if isinstance(value, Text) else str(value)
