"""Every confirmed finding of the campaign, worst first: severity, family, CWE, where it was found, what it is."""

from __future__ import annotations

from collections.abc import Sequence

from rich.text import Text
from textual.widgets import DataTable

from tui.findings import SEVERITY_STYLE, FindingRow

COLUMNS = ("sev", "family", "CWE", "task", "agent", "rep", "summary")
SUMMARY_CHARS = 120


class FindingsTable(DataTable[str | Text]):
    """The screen calls ``show``; tests read ``findings``."""

    DEFAULT_CSS = """
    FindingsTable { height: 1fr; border: round $primary 50%; border-title-color: $text-muted;
                    scrollbar-size-vertical: 1; }
    FindingsTable:focus { border: round $primary; }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id, cursor_type="row", zebra_stripes=True)
        self.findings: list[FindingRow] = []

    def on_mount(self) -> None:
        self.border_title = "Findings  (confirmed, worst first)"
        for name in COLUMNS:
            self.add_column(name, key=name)

    def show(self, findings: Sequence[FindingRow]) -> None:
        self.findings = list(findings)
        cursor = self.cursor_row
        self.clear()
        for index, row in enumerate(self.findings):
            summary = row.summary if len(row.summary) <= SUMMARY_CHARS else row.summary[: SUMMARY_CHARS - 1] + "…"
            self.add_row(Text(row.severity, style=SEVERITY_STYLE.get(row.severity, "red")), row.family, row.cwe,
                         row.task_id, row.agent, str(row.repeat), summary, key=str(index))
        if self.row_count:
            self.move_cursor(row=min(cursor, self.row_count - 1))
