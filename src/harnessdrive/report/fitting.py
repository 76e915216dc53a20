"""Tables that fit the width they are printed at: each view offers layouts from the widest to the
narrowest, and the first whose natural width fits is printed, so no column is cut to "…" or left
blank. Columns get a minimum width, and columns empty for every row are left out."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

from rich.console import Console, ConsoleOptions, RenderableType
from rich.measure import Measurement
from rich.table import Table
from rich.text import Text

EMPTY_CELLS = frozenset({"", "-", "0", "0 of 0"})
"""What a cell holds when it says nothing about its row; a column of only these is left out."""

UNBOUNDED = 100_000


@dataclass(frozen=True)
class Column:
    header: str
    cells: tuple[str | Text, ...]
    right: bool = False
    wraps: bool = False
    """May break its cells over lines (names, verdicts); the others never wrap."""
    kept: bool = False
    """Shown even when every cell is empty."""


def plain(cell: str | Text) -> str:
    return cell.plain if isinstance(cell, Text) else cell


def shown_columns(columns: Sequence[Column]) -> list[Column]:
    return [c for c in columns if c.kept or any(plain(x) not in EMPTY_CELLS for x in c.cells)]


def table_of(title: str, columns: Sequence[Column], *, compact: bool = False) -> Table:
    """A table of ``columns``; each no-wrap column's minimum width is its widest cell, a
    wrapping one's its longest word, so squeezing wraps text and never crops it."""
    table = Table(
        title=title,
        title_justify="left",
        show_edge=not compact,
        pad_edge=not compact,
        padding=(0, 1),
    )
    for column in columns:
        texts = [column.header, *(plain(c) for c in column.cells)]
        if column.wraps:
            widest = max((len(word) for text in texts for word in text.split()), default=1)
            least = min(widest, 8)
        else:
            least = max(len(text) for text in texts)
        table.add_column(
            Text(column.header),
            justify="right" if column.right else "left",
            no_wrap=not column.wraps,
            overflow="fold",
            min_width=max(least, 1),
        )
    for row in zip(*(c.cells for c in columns), strict=True):
        # Text, not markup: a name like "arm[x]" prints as it is.
        table.add_row(*(cell if isinstance(cell, Text) else Text(cell) for cell in row))
    return table


class Fitted:
    """The first of ``layouts`` whose natural width fits; the last one otherwise (it should be
    one that wraps). ``narrowest_full`` sends any width below it to the last layout at once."""

    def __init__(self, layouts: Sequence[Callable[[], Table]], *, narrowest_full: int = 0):
        self.layouts = tuple(layouts)
        self.narrowest_full = narrowest_full

    def choose(self, console: Console, width: int) -> Table:
        candidates = self.layouts if width >= self.narrowest_full else self.layouts[-1:]
        for layout in candidates[:-1]:
            table = layout()
            if natural_width(console, table) <= width:
                return table
        return candidates[-1]()

    def widest(self) -> Table:
        return self.layouts[0]()

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> Iterator[Table]:
        yield self.choose(console, options.max_width)


def natural_width(console: Console, renderable: RenderableType) -> int:
    options = console.options.update(max_width=UNBOUNDED)
    return Measurement.get(console, options, renderable).maximum
