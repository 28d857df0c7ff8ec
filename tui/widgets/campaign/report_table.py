"""The base of the campaign's four report tables: rows replaced wholesale, column widths fitted to what is shown.

A DataTable keeps a column as wide as the widest value it ever held, so a live campaign would leave a column
sized for an interval that has since become ``n/a``, and the final screen would depend on which intermediate
reports happened to arrive. Rebuilding the columns with the rows makes the screen a function of the last report.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import ClassVar

from rich.cells import cell_len
from rich.text import Text
from textual.widgets import DataTable

Row = tuple[Sequence[str | Text], str]
"""The cells of one row and its key."""


def _width(cell: str | Text) -> int:
    return cell.cell_len if isinstance(cell, Text) else cell_len(cell)


class ReportTable(DataTable[str | Text]):
    """Subclasses name their ``COLUMNS`` and ``TITLE`` and call ``replace_rows``; the cursor keeps its row."""

    DEFAULT_CSS = """
    ReportTable { height: 1fr; border: round $primary 50%; border-title-color: $text-muted;
                  scrollbar-size-vertical: 1; }
    ReportTable:focus { border: round $primary; }
    """

    COLUMNS: ClassVar[tuple[str, ...]] = ()
    TITLE: ClassVar[str] = ""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id, cursor_type="row", zebra_stripes=True)

    def on_mount(self) -> None:
        self.border_title = self.TITLE
        self._add_columns([])

    def _add_columns(self, rows: Sequence[Row]) -> None:
        """Columns as wide as their widest cell, measured here: a DataTable measures on idle and keeps the cells
        it drew before at the old width (a row drawn between ``add_row`` and the next idle stayed cut, '=' for
        '=1', under load)."""
        for index, name in enumerate(self.COLUMNS):
            width = max([cell_len(name), *(_width(cells[index]) for cells, _ in rows if index < len(cells))])
            self.add_column(name, key=name, width=width)

    def replace_rows(self, rows: Iterable[Row]) -> None:
        cursor = self.cursor_row
        rows = list(rows)
        self.clear(columns=True)
        self._add_columns(rows)
        for cells, key in rows:
            self.add_row(*cells, key=key)
        if self.row_count:
            self.move_cursor(row=min(cursor, self.row_count - 1))
