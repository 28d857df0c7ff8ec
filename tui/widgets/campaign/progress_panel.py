"""A campaign's progress: a bar over every planned battle, the counts, the rate and the time left."""

from __future__ import annotations

import time
from collections.abc import Callable

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.widgets import ProgressBar, Static

from logomesh.campaign.runner import CampaignProgress

IDLE = "idle: choose tasks and agents, then ctrl+r"


def duration_text(seconds: float) -> str:
    """``mm:ss``, or ``h:mm:ss`` from an hour on."""
    minutes, secs = divmod(int(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes:02d}:{secs:02d}"


def counts_text(progress: CampaignProgress, now: float) -> str:
    """``done 10  failed 1  running 4  retried 0  6.2/min  ETA 04:31``."""
    eta = progress.eta_seconds(now)
    eta_text = duration_text(eta) if eta is not None else "--:--"
    return (f"done {progress.done}  failed {progress.failed}  running {progress.running}  "
            f"retried {progress.retried}  {progress.rate_per_minute(now):.1f}/min  ETA {eta_text}")


def recorded_text(progress: CampaignProgress) -> str:
    """``12/40 battles (2 from before)``."""
    earlier = f" ({progress.already} from before)" if progress.already else ""
    return f"{progress.recorded}/{progress.total} battles{earlier}"


def without_campaign_id(line: str, campaign_id: str) -> str:
    """A progress line with the campaign's id left out of its battle ids (``task:agent:…:r2``): the panel's title
    shows it, and what tells the battles apart (task, agent, repeat) then fits an 80-column line."""
    return line.replace(f":{campaign_id}:", ":…:") if campaign_id else line


class CampaignProgressPanel(Vertical):
    """The screen calls ``begin``, ``show`` and ``end``; tests read ``progress`` and ``status``."""

    DEFAULT_CSS = """
    CampaignProgressPanel {
        height: auto;
        border: round $accent 50%;
        border-title-color: $text-muted;
        padding: 0 1;
    }
    CampaignProgressPanel #bar-row { height: 1; }
    CampaignProgressPanel #recorded { width: 1fr; padding-left: 2; text-wrap: nowrap; text-overflow: ellipsis; }
    CampaignProgressPanel #counts, CampaignProgressPanel #last {
        height: 1; text-wrap: nowrap; text-overflow: ellipsis;
    }
    CampaignProgressPanel #last { color: $text-muted; }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.progress: CampaignProgress | None = None
        self.status = "idle"
        self.campaign_id = ""
        self.stopped_at: float | None = None
        self.clock: Callable[[], float] = time.monotonic  # the runner's clock; snapshot tests replace it

    def compose(self) -> ComposeResult:
        with Horizontal(id="bar-row"):
            yield ProgressBar(total=1, id="bar", show_eta=False)
            yield Static("", id="recorded")
        yield Static(IDLE, id="counts")
        yield Static("", id="last")

    def on_mount(self) -> None:
        self.border_title = "Campaign"
        self.set_interval(1.0, self.render_counts)  # rate and ETA move with time, not only with events

    def begin(self, campaign_id: str) -> None:
        self.campaign_id, self.status, self.progress, self.stopped_at = campaign_id, "starting", None, None
        self.border_title = f"Campaign {campaign_id}  starting"
        self.query_one(ProgressBar).update(total=None, progress=0)
        self.query_one("#recorded", Static).update("")
        self.query_one("#counts", Static).update("checking the agents and the sandbox, then starting the workers…")
        self.query_one("#last", Static).update("")

    def show(self, progress: CampaignProgress) -> None:
        if self.status == "starting":
            self.status = "running"
            self.border_title = f"Campaign {self.campaign_id}  running"
        self.progress = progress
        self.query_one(ProgressBar).update(total=max(1, progress.total), progress=progress.recorded)
        self.query_one("#recorded", Static).update(recorded_text(progress))
        last = without_campaign_id(progress.last, self.campaign_id)
        self.query_one("#last", Static).update(Text(last, no_wrap=True, overflow="ellipsis"))
        self.render_counts()

    def set_status(self, status: str) -> None:
        self.status = status
        self.border_title = f"Campaign {self.campaign_id}  {status}"

    def end(self, status: str, progress: CampaignProgress | None, reason: str) -> None:
        if progress is not None:
            self.show(progress)
        self.stopped_at = self.clock()
        self.set_status(status)
        if reason:
            self.query_one("#last", Static).update(Text(f"{status}: {reason}", no_wrap=True, overflow="ellipsis"))
        if self.progress is None:  # it failed before the driver reported anything
            self.query_one(ProgressBar).update(total=1, progress=0)
            self.query_one("#counts", Static).update(f"{status}: no battle ran")
        self.render_counts()

    def render_counts(self) -> None:
        if self.progress is None:
            return
        now = self.stopped_at or self.clock()
        self.query_one("#counts", Static).update(counts_text(self.progress, now))
