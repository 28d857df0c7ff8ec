"""The campaign's progress bar on stderr (rich): done, failed, running, rate and ETA.

Only the command layer imports this, lazily: the engine stays free of rich.
On a stderr that is not a terminal, one plain line per recorded battle instead.
"""

from __future__ import annotations

import sys
from types import TracebackType

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn, TimeElapsedColumn

from logomesh.campaign.runner import CampaignProgress
from logomesh.campaign.work import JobDone


def _figures(p: CampaignProgress) -> str:
    eta = p.eta_seconds()
    eta_text = f"{eta / 60:.1f} min" if eta is not None else "?"
    return (f"failed {p.failed} · running {p.running} · retried {p.retried} · "
            f"{p.rate_per_minute():.1f}/min · ETA {eta_text}")


class CampaignProgressBar:
    """An observer for ``run_campaign`` that draws itself on stderr."""

    def __init__(self) -> None:
        self._console = Console(stderr=True)
        self._live = self._console.is_terminal
        self._progress = Progress(
            TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
            TextColumn("{task.fields[figures]}"), TimeElapsedColumn(), console=self._console,
        )
        self._task: TaskID | None = None

    def __enter__(self) -> CampaignProgressBar:
        if self._live:
            self._progress.start()
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        if self._live:
            self._progress.stop()

    def __call__(self, progress: CampaignProgress, recorded: JobDone | None) -> None:
        if self._task is None:
            self._task = self._progress.add_task(progress.campaign_id, total=progress.total,
                                                 completed=progress.recorded, figures=_figures(progress))
        self._progress.update(self._task, completed=progress.recorded, figures=_figures(progress))
        if not self._live and recorded is not None:
            result = recorded.played.result
            print(f"[{progress.recorded}/{progress.total}] {recorded.job.battle_id}: {result.status} "
                  f"CIS {result.cis_score:.3f} · {_figures(progress)}", file=sys.stderr, flush=True)
