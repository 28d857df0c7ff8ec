"""The ledger entries: sortable, filterable, markable, with a verification column."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

from rich.text import Text
from textual import on
from textual.binding import Binding, BindingType
from textual.coordinate import Coordinate
from textual.message import Message
from textual.widgets import DataTable

from tui.ledger_source import LedgerRow
from tui.widgets.text_cut import distinct_cuts

COLUMNS = ("#", "battle", "CIS", "status", "task", "purple", "time")
def _sortable(value: Any) -> tuple[bool, Any]:
    """A column's value for sorting; an empty one (a cancelled battle's CIS) after every value."""
    return value is None, 0 if value is None else value


SORT_KEYS = ("sequence", "battle_id", "cis", "status", "task_id", "purple", "timestamp")
# The order the drawn columns take, with the sort key they sort by ("mark" and "check" do not sort).
DRAWN = ("mark", "sequence", "battle_id", "cis", "status", "check", "task_id", "purple", "timestamp")
HEADERS = {"mark": " ", "check": "check", **dict(zip(SORT_KEYS, COLUMNS, strict=True))}
# Columns that give up width, most willing first, and the narrowest each may become.
# Ids and names are cut in the middle so that two different ones never look alike.
DISTINCT = ("battle_id", "task_id", "purple")
SHRINKABLE = (("check", 16), ("purple", 8), ("task_id", 8), ("battle_id", 12))
# The floors once the time is compact: a "cancelled" row at 80 columns needs these 6 cells more.
TIGHT = (("check", 16), ("purple", 6), ("task_id", 6), ("battle_id", 10))
CELL_PADDING = 2  # one cell of padding each side of every column
CHROME = 1  # the vertical scrollbar (``size`` is already inside the border)


def fit(text: str, width: int) -> str:
    """``text`` cut to ``width`` cells with an ellipsis, or as is when it fits."""
    return text if len(text) <= width else text[: max(0, width - 1)] + "…"


def compact_time(timestamp: str) -> str:
    """``2026-11-23 00:51:38`` → ``11-23 00:51``, for a table too narrow for the full time."""
    return timestamp[5:16]


def column_widths(natural: dict[str, int], available: int,
                  shrinkable: tuple[tuple[str, int], ...] = SHRINKABLE) -> dict[str, int]:
    """Each column's width so that all of them fit ``available`` cells, taking from ``shrinkable`` widest first."""
    widths = dict(natural)
    excess = sum(widths.values()) + CELL_PADDING * len(widths) - available
    floors = dict(shrinkable)
    while excess > 0:
        candidates = [key for key in floors if widths[key] > floors[key]]
        if not candidates:
            break
        widest = max(candidates, key=lambda key: widths[key] - floors[key])
        widths[widest] -= 1
        excess -= 1
    return widths


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

    class SortChanged(Message):
        """The sort column or direction changed."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id, cursor_type="row", zebra_stripes=True)
        self.all_rows: list[LedgerRow] = []
        self.marks: dict[int, tuple[bool, str]] = {}
        self.marked: set[int] = set()
        self.needle = ""
        self.sort_index = 0
        self.sort_reverse = False

    def on_mount(self) -> None:
        self.rebuild()

    def on_resize(self) -> None:
        self.rebuild()

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
        return sorted(rows, key=lambda row: (*_sortable(getattr(row, key)), row.sequence), reverse=self.sort_reverse)

    def rebuild(self) -> None:
        """Redraw every row, with column widths that fit the table's width (the time column stays whole)."""
        selected = self.selected_sequence()
        rows = self.visible_rows()
        texts = [self._texts(row) for row in rows]
        available = self.size.width - CHROME
        widths = self._widths(texts, available)
        if available > 0 and sum(widths.values()) + CELL_PADDING * len(widths) > available:
            texts = [{**cells, "timestamp": compact_time(cells["timestamp"])} for cells in texts]
            widths = self._widths(texts, available)
        if available > 0 and sum(widths.values()) + CELL_PADDING * len(widths) > available:
            widths = self._widths(texts, available, TIGHT)
        shown = {key: distinct_cuts((cells[key] for cells in texts), widths[key]) for key in DISTINCT}
        texts = [{**cells, **{key: shown[key][cells[key]] for key in DISTINCT}} for cells in texts]
        self.clear(columns=True)
        for key in DRAWN:
            self.add_column(self._heading(key), key=key, width=widths[key])
        for row, cells in zip(rows, texts, strict=True):
            self.add_row(self._mark_cell(row.sequence),
                         *(self._cell(key, cells[key], widths[key], row.sequence) for key in DRAWN[1:]),
                         key=str(row.sequence))
        if selected is not None and str(selected) in self.rows:
            self.move_cursor(row=self.get_row_index(str(selected)))

    def _texts(self, row: LedgerRow) -> dict[str, str]:
        """The plain text of each drawn column (the mark column is drawn apart)."""
        cells = dict(zip(SORT_KEYS, row.cells(), strict=True))
        return {**cells, "mark": " ", "check": self._check_cell(row.sequence).plain}

    def _widths(self, texts: list[dict[str, str]], available: int,
                shrinkable: tuple[tuple[str, int], ...] = SHRINKABLE) -> dict[str, int]:
        natural = {key: max([len(self._heading(key)), *(len(cells[key]) for cells in texts)]) for key in DRAWN}
        natural["mark"] = 1
        return column_widths(natural, available, shrinkable) if available > 0 else natural

    def _heading(self, key: str) -> str:
        if key in SORT_KEYS and SORT_KEYS.index(key) == self.sort_index:
            return f"{HEADERS[key]} {'↓' if self.sort_reverse else '↑'}"
        return HEADERS[key]

    def _cell(self, key: str, text: str, width: int, sequence: int) -> str | Text:
        if key == "check":
            styled = self._check_cell(sequence)
            return Text(fit(text, width), style=styled.style)
        return fit(text, width)

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
        self.post_message(self.SortChanged())

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
