"""The campaign per task: each task × agent cell with its battles, mean CIS and range, hidden tests, findings."""

from __future__ import annotations

from collections.abc import Sequence

from rich.text import Text

from logomesh.campaign.model import Cell
from tui.widgets.campaign.report_table import ReportTable, Row

COLUMNS = ("task", "agent", "done", "mean CIS", "range", "hidden", "findings", "failed")
NONE = "—"


def cell_cells(cell: Cell) -> tuple[str, ...]:
    mean = f"{cell.mean_cis:.3f}" if cell.mean_cis is not None else NONE
    interval = (f"{cell.cis_min:.3f}–{cell.cis_max:.3f}" if cell.cis_min is not None and cell.cis_max is not None
                else NONE)
    hidden = f"{cell.hidden_passed}/{cell.hidden_total}" if cell.hidden_total else NONE
    failed = cell.agent_failed + cell.infra_failed
    return (cell.task_id, cell.agent, f"{cell.recorded}/{cell.planned}", mean, interval, hidden, str(cell.findings),
            str(failed))


class TaskTable(ReportTable):
    """The screen calls ``show``; tests read ``cells``."""

    COLUMNS = COLUMNS
    TITLE = "Per task  (task × agent)"

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.cells: list[Cell] = []

    def show(self, cells: Sequence[Cell]) -> None:
        self.cells = list(cells)  # the report's order: tasks by best mean, agents by rank
        rows: list[Row] = []
        for cell in self.cells:
            values = cell_cells(cell)
            findings = Text(values[6], style="bold red" if cell.findings else "dim")
            rows.append(((Text(values[0], style="bold"), *values[1:6], findings, values[7]),
                         f"{cell.task_id}\0{cell.agent}"))
        self.replace_rows(rows)
