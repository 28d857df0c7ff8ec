"""The live leaderboard: the campaign report's ranks (= marks a tie), mean CIS with its 95% interval over tasks."""

from __future__ import annotations

from collections.abc import Sequence

from rich.text import Text

from logomesh.campaign.model import LeaderRow
from logomesh.campaign.report_text import NO_INTERVAL, rank_text
from tui.widgets.campaign.report_table import ReportTable, Row

COLUMNS = ("#", "agent", "mean CIS", "95% CI", "tasks", "solved", "battles", "failed")
NONE = "—"
TITLE = "Leaderboard  (mean CIS over tasks, 95% CI by task)"


def leader_cells(row: LeaderRow) -> tuple[str, ...]:
    interval = NO_INTERVAL if row.ci_low is None or row.ci_high is None else f"{row.ci_low:.3f}–{row.ci_high:.3f}"
    return (rank_text(row.rank, row.tied), row.agent, f"{row.mean_cis:.3f}", interval, str(row.tasks),
            f"{row.solved_tasks}/{row.tasks}", str(row.battles), str(row.failed))


def refusals(rows: Sequence[LeaderRow]) -> str:
    """Why an interval is n/a, per agent (agents refused for the same reason share one line)."""
    by_reason: dict[str, list[str]] = {}
    for row in rows:
        if row.interval.reason:
            by_reason.setdefault(row.interval.reason, []).append(row.agent)
    return "; ".join(f"{NO_INTERVAL} for {', '.join(agents)}: {reason}" for reason, agents in by_reason.items())


class Leaderboard(ReportTable):
    """The screen calls ``show``; tests read ``ranked`` and ``unranked``."""

    COLUMNS = COLUMNS
    TITLE = TITLE

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.ranked: list[LeaderRow] = []
        self.unranked: list[tuple[str, int]] = []
        self.battles = 0

    def show(self, ranked: Sequence[LeaderRow], unranked: Sequence[tuple[str, int]] = (), battles: int = 0) -> None:
        """Replace the rows; ``unranked`` are (agent, battles) without a counted battle yet, listed last."""
        self.ranked, self.unranked, self.battles = list(ranked), list(unranked), battles
        self.border_title = f"{TITLE}  over {battles} battles" if battles else TITLE
        self.border_subtitle = refusals(self.ranked)
        rows: list[Row] = []
        for row in self.ranked:
            cells = leader_cells(row)
            rows.append(((Text(cells[0], style="bold"), Text(cells[1], style="bold"), *cells[2:]), row.agent))
        for agent, count in self.unranked:
            rows.append(((Text(NONE, style="dim"), Text(agent, style="dim"), NONE, NONE, "0", NONE, str(count),
                          str(count)), agent))
        self.replace_rows(rows)
