"""The ledger entries: sortable, filterable, markable, with a verification column."""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from rich.text import Text
from textual import on
from textual.binding import Binding, BindingType
from textual.coordinate import Coordinate
from textual.message import Message
from textual.widgets import DataTable

from tui.ledger_source import LedgerRow

COLUMNS = ("#", "battle", "CIS", "status", "task", "purple", "time")
SORT_KEYS = ("sequence", "battle_id", "cis", "status", "task_id", "purple", "timestamp")


def matches(row: LedgerRow, needle: str) -> bool:
    """Case-insensitive: every word of ``needle`` appears in some column."""
    haystack = " ".join(row.cells()).lower()
    return all(word in haystack for word in needle.lower().split())


class EntriesTable(DataTable[str | Text]):
    DEFAULT_CSS = """
    EntriesTable { height: 1fr; border: round $primary 50%; scrollbar-size-vertical: 1; }
    EntriesTable:focus { border: round $primary; }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("space", "toggle_mark", "Mark"),
        Binding("s", "cycle_sort", "Sort"),
    ]

    class MarksChanged(Message):
        """The set of rows marked for export changed."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id, cursor_type="row", zebra_stripes=True)
        self.all_rows: list[LedgerRow] = []
        self.marks: dict[int, tuple[bool, str]] = {}
        self.marked: set[int] = set()
        self.needle = ""
        self.sort_index = 0
        self.sort_reverse = False

    def on_mount(self) -> None:
        self.add_column(" ", key="mark", width=1)
        for name, key in zip(COLUMNS[:4], SORT_KEYS[:4], strict=True):
            self.add_column(name, key=key)
        self.add_column("check", key="check")
        for name, key in zip(COLUMNS[4:], SORT_KEYS[4:], strict=True):
            self.add_column(name, key=key)

    def set_rows(self, rows: Sequence[LedgerRow]) -> None:
        self.all_rows = list(rows)
        known = {row.sequence for row in rows}
        self.marked &= known
        self.rebuild()

    def set_filter(self, needle: str) -> None:
        self.needle = needle.strip()
        self.rebuild()

    def set_marks(self, marks: dict[int, tuple[bool, str]]) -> None:
        self.marks = dict(marks)
        self.rebuild()

    def visible_rows(self) -> list[LedgerRow]:
        rows = [row for row in self.all_rows if matches(row, self.needle)] if self.needle else list(self.all_rows)
        key = SORT_KEYS[self.sort_index]
        return sorted(rows, key=lambda row: (getattr(row, key), row.sequence), reverse=self.sort_reverse)

    def rebuild(self) -> None:
        selected = self.selected_sequence()
        self.clear()
        for row in self.visible_rows():
            cells = row.cells()
            self.add_row(self._mark_cell(row.sequence), *cells[:4], self._check_cell(row.sequence), *cells[4:],
                         key=str(row.sequence))
        if selected is not None and str(selected) in self.rows:
            self.move_cursor(row=self.get_row_index(str(selected)))

    def selected_sequence(self) -> int | None:
        if self.row_count == 0:
            return None
        key = self.coordinate_to_cell_key(Coordinate(self.cursor_row, 0)).row_key.value
        return int(key) if key is not None else None

    def action_toggle_mark(self) -> None:
        sequence = self.selected_sequence()
        if sequence is None:
            return
        self.marked ^= {sequence}
        self.update_cell(str(sequence), "mark", self._mark_cell(sequence))
        self.post_message(self.MarksChanged())

    def action_cycle_sort(self) -> None:
        self.sort_by(self.sort_index + 1 if self.sort_reverse else self.sort_index, not self.sort_reverse)

    def sort_by(self, index: int, reverse: bool) -> None:
        self.sort_index = index % len(SORT_KEYS)
        self.sort_reverse = reverse
        self.rebuild()

    @on(DataTable.HeaderSelected)
    def _header(self, event: DataTable.HeaderSelected) -> None:
        key = event.column_key.value
        if key in SORT_KEYS:
            index = SORT_KEYS.index(key)
            self.sort_by(index, not self.sort_reverse if index == self.sort_index else False)

    def sort_description(self) -> str:
        return f"{COLUMNS[self.sort_index]} {'↓' if self.sort_reverse else '↑'}"

    def _mark_cell(self, sequence: int) -> Text:
        return Text("●", style="bold yellow") if sequence in self.marked else Text(" ")

    def _check_cell(self, sequence: int) -> Text:
        mark = self.marks.get(sequence)
        if mark is None:
            return Text("")
        ok, reason = mark
        if ok:
            return Text("✓", style="bold green")
        reasons = reason.split("; ")
        more = f" (+{len(reasons) - 1})" if len(reasons) > 1 else ""
        first = reasons[0] if len(reasons[0]) <= 48 else reasons[0][:47] + "…"
        return Text(f"✗ {first}{more}", style="bold red")
