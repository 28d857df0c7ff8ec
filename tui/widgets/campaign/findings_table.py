"""Every confirmed finding of the campaign, worst first: severity, family, CWE, where it was found, what it is."""

from __future__ import annotations

from collections.abc import Sequence

from rich.text import Text

from logomesh.campaign.model import BattleFinding
from tui.findings import SEVERITY_STYLE
from tui.widgets.campaign.report_table import ReportTable, Row

COLUMNS = ("sev", "family", "CWE", "task", "agent", "rep", "summary")
SUMMARY_CHARS = 120


class FindingsTable(ReportTable):
    """The screen calls ``show``; tests read ``findings``."""

    COLUMNS = COLUMNS
    TITLE = "Findings  (confirmed, worst first)"

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.findings: list[BattleFinding] = []

    def show(self, findings: Sequence[BattleFinding]) -> None:
        self.findings = list(findings)
        rows: list[Row] = []
        for index, found in enumerate(self.findings):
            finding, severity = found.finding, found.finding.severity or "?"
            summary = " ".join(finding.summary.split())
            summary = summary if len(summary) <= SUMMARY_CHARS else summary[: SUMMARY_CHARS - 1] + "…"
            rows.append(((Text(severity, style=SEVERITY_STYLE.get(severity, "red")), finding.family or "?",
                          finding.cwe, found.task_id, found.agent, str(found.repeat), summary), str(index)))
        self.replace_rows(rows)
