"""The live leaderboard: agents by mean CIS with its 95% interval, battles and failures."""

from __future__ import annotations

from collections.abc import Sequence

from rich.text import Text
from textual.widgets import DataTable

from logomesh.campaign.report import NO_INTERVAL, LeaderRow

COLUMNS = ("#", "agent", "mean CIS", "95% CI", "battles", "failed")
NONE = "—"
TITLE = "Leaderboard  (mean CIS, 95% CI)"


def leader_cells(row: LeaderRow) -> tuple[str, ...]:
    interval = NO_INTERVAL if row.ci_low is None or row.ci_high is None else f"{row.ci_low:.3f}–{row.ci_high:.3f}"
    return (str(row.rank), row.agent, f"{row.mean_cis:.3f}", interval, str(row.battles), str(row.failed))


class Leaderboard(DataTable[str | Text]):
    """The screen calls ``show``; tests read ``ranked`` and ``unranked``."""

    DEFAULT_CSS = """
    Leaderboard { height: 1fr; border: round $primary 50%; border-title-color: $text-muted;
                  scrollbar-size-vertical: 1; }
    Leaderboard:focus { border: round $primary; }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id, cursor_type="row", zebra_stripes=True)
        self.ranked: list[LeaderRow] = []
        self.unranked: list[tuple[str, int]] = []
        self.battles = 0

    def on_mount(self) -> None:
        self.border_title = TITLE
        for name in COLUMNS:
            self.add_column(name, key=name)

    def show(self, ranked: Sequence[LeaderRow], unranked: Sequence[tuple[str, int]] = (), battles: int = 0) -> None:
        """Replace the rows; ``unranked`` are (agent, battles) without a counted battle yet, listed last."""
        self.ranked, self.unranked, self.battles = list(ranked), list(unranked), battles
        self.border_title = f"{TITLE}  over {battles} battles" if battles else TITLE
        cursor = self.cursor_row
        self.clear()
        for row in self.ranked:
            cells = leader_cells(row)
            self.add_row(Text(cells[0], style="bold"), Text(cells[1], style="bold"), *cells[2:], key=row.agent)
        for agent, battles in self.unranked:
            self.add_row(Text(NONE, style="dim"), Text(agent, style="dim"), NONE, NONE, str(battles), str(battles),
                         key=agent)
        if self.row_count:
            self.move_cursor(row=min(cursor, self.row_count - 1))
