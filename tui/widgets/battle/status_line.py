"""One line under the panels: stage, elapsed time, battle id, search size."""

from __future__ import annotations

import time
from collections.abc import Callable

from textual.widgets import Static


def elapsed_text(seconds: float) -> str:
    minutes, secs = divmod(int(seconds), 60)
    return f"{minutes:02d}:{secs:02d}"


class StatusLine(Static):
    DEFAULT_CSS = """
    StatusLine {
        height: 1;
        background: $panel;
        color: $text;
        padding: 0 1;
    }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__("idle: pick a task and a purple agent, then ctrl+r", id=id)
        self.stage = "idle"
        self.battle_id = ""
        self.nodes = 0
        self.started_at: float | None = None
        self.stopped_at: float | None = None
        self.clock: Callable[[], float] = time.monotonic  # replaced by snapshot tests, which show no real time

    def on_mount(self) -> None:
        self.set_interval(0.5, self.render_status)

    def begin(self, battle_id: str) -> None:
        self.battle_id, self.stage, self.nodes = battle_id, "starting", 0
        self.started_at, self.stopped_at = self.clock(), None
        self.render_status()

    def set_stage(self, stage: str) -> None:
        self.stage = stage
        self.render_status()

    def end(self, stage: str) -> None:
        self.stage = stage
        self.stopped_at = self.clock()
        self.render_status()

    def render_status(self) -> None:
        if self.started_at is None:
            return
        now = self.stopped_at or self.clock()
        self.update(f"{self.stage}  {elapsed_text(now - self.started_at)}  {self.battle_id}  nodes {self.nodes}")
