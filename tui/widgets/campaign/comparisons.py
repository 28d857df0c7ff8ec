"""The campaign report's paired comparisons: every pair of agents on their shared tasks, and who is better."""

from __future__ import annotations

from collections.abc import Sequence

from rich.text import Text
from textual.widgets import DataTable

from logomesh.campaign.model import Comparison
from logomesh.campaign.report_text import NO_INTERVAL, num

COLUMNS = ("first − second", "tasks", "mean diff", "95% CI", "verdict", "solved only", "McNemar p", "why no CI")
TITLE = "Paired comparisons  (paired bootstrap over shared tasks)"


def comparison_cells(c: Comparison) -> tuple[str, ...]:
    interval = NO_INTERVAL if not c.interval.ok else f"{c.interval.low:.3f}–{c.interval.high:.3f}"
    verdict = "tie" if c.verdict == "tie" else f"{c.verdict} better"
    return (f"{c.first} − {c.second}", str(c.shared_tasks), num(c.mean_difference, 3), interval, verdict,
            f"{c.first_only}/{c.second_only}", num(c.mcnemar_p, 3), c.interval.reason or "")


class ComparisonsTable(DataTable[str | Text]):
    """The screen calls ``show``; tests read ``comparisons``."""

    DEFAULT_CSS = """
    ComparisonsTable { height: 1fr; border: round $primary 50%; border-title-color: $text-muted;
                       scrollbar-size-vertical: 1; }
    ComparisonsTable:focus { border: round $primary; }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id, cursor_type="row", zebra_stripes=True)
        self.comparisons: list[Comparison] = []

    def on_mount(self) -> None:
        self.border_title = TITLE
        for name in COLUMNS:
            self.add_column(name, key=name)

    def show(self, comparisons: Sequence[Comparison]) -> None:
        self.comparisons = list(comparisons)
        cursor = self.cursor_row
        self.clear()
        for c in self.comparisons:
            cells = comparison_cells(c)
            verdict = Text(cells[4], style="dim" if c.verdict == "tie" else "bold green")
            self.add_row(Text(cells[0], style="bold"), *cells[1:4], verdict, *cells[5:7], Text(cells[7], style="dim"),
                         key=f"{c.first}\0{c.second}")
        if self.row_count:
            self.move_cursor(row=min(cursor, self.row_count - 1))
