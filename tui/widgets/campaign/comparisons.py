"""The campaign report's paired comparisons: every pair of agents on their shared tasks, and who is better."""

from __future__ import annotations

from collections.abc import Sequence

from rich.text import Text

from logomesh.campaign.model import Comparison
from logomesh.campaign.report_text import NO_INTERVAL, num
from tui.widgets.campaign.report_table import ReportTable, Row

# Why a pair has no interval is a sentence: the screen shows the highlighted pair's whole, under the table.
COLUMNS = ("first − second", "tasks", "mean diff", "95% CI", "verdict", "solved only", "McNemar p")
TITLE = "Paired comparisons  (paired bootstrap over shared tasks)"


def comparison_cells(c: Comparison) -> tuple[str, ...]:
    interval = NO_INTERVAL if not c.interval.ok else f"{c.interval.low:.3f}–{c.interval.high:.3f}"
    verdict = "tie" if c.verdict == "tie" else f"{c.verdict} better"
    return (f"{c.first} − {c.second}", str(c.shared_tasks), num(c.mean_difference, 3), interval, verdict,
            f"{c.first_only}/{c.second_only}", num(c.mcnemar_p, 3))


class ComparisonsTable(ReportTable):
    """The screen calls ``show``; tests read ``comparisons``."""

    COLUMNS = COLUMNS
    TITLE = TITLE

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.comparisons: list[Comparison] = []

    def show(self, comparisons: Sequence[Comparison]) -> None:
        self.comparisons = list(comparisons)
        rows: list[Row] = []
        for c in self.comparisons:
            cells = comparison_cells(c)
            verdict = Text(cells[4], style="dim" if c.verdict == "tie" else "bold green")
            rows.append(((Text(cells[0], style="bold"), *cells[1:4], verdict, *cells[5:7]), f"{c.first}\0{c.second}"))
        self.replace_rows(rows)
