"""Every confirmed finding of the campaign, worst first: severity, family, CWE, where it was found, what it is."""

from __future__ import annotations

from collections.abc import Sequence

from rich.text import Text

from tui.findings import SEVERITY_STYLE, FindingRow
from tui.widgets.campaign.report_table import ReportTable, Row

COLUMNS = ("sev", "family", "CWE", "task", "agent", "rep", "summary")
SUMMARY_CHARS = 120


class FindingsTable(ReportTable):
    """The screen calls ``show``; tests read ``findings``."""

    COLUMNS = COLUMNS
    TITLE = "Findings  (confirmed, worst first)"

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.findings: list[FindingRow] = []

    def show(self, findings: Sequence[FindingRow]) -> None:
        self.findings = list(findings)
        rows: list[Row] = []
        for index, row in enumerate(self.findings):
            summary = row.summary if len(row.summary) <= SUMMARY_CHARS else row.summary[: SUMMARY_CHARS - 1] + "…"
            rows.append(((Text(row.severity, style=SEVERITY_STYLE.get(row.severity, "red")), row.family, row.cwe,
                          row.task_id, row.agent, str(row.repeat), summary), str(index)))
        self.replace_rows(rows)
