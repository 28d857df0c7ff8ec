"""Where a battle's wall time goes: an event sink that adds up the time between ``StageStarted`` events.

Timings belong to the host and its load, not to the battle: they are printed and handed back beside a
result (``battle run``, its ``--json``, a campaign's progress), never inside the signed result, so the
same battle records the same bytes however long it took.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable

from logomesh.events import Event, StageStarted

START_UP = "start-up"  # from the process's start to the first stage: imports, checks, opening the sandbox


def process_age_s() -> float:
    """Seconds since this process started (Linux ``/proc``), or 0.0 where that cannot be read."""
    try:
        with open("/proc/self/stat", encoding="ascii") as handle:
            started_ticks = int(handle.read().rsplit(")", 1)[1].split()[19])
        with open("/proc/uptime", encoding="ascii") as handle:
            uptime = float(handle.read().split()[0])
    except (OSError, ValueError, IndexError):
        return 0.0
    return max(0.0, uptime - started_ticks / os.sysconf("SC_CLK_TCK"))


class StageClock:
    """An event sink that adds up the wall time between ``StageStarted`` events, per stage.

    ``start_up`` opens the clock in the ``start-up`` stage with that many seconds already spent (a command
    passes ``process_age_s()``); without it the clock counts nothing until the first stage starts.
    """

    def __init__(self, clock: Callable[[], float] = time.perf_counter, start_up: float | None = None) -> None:
        self._clock = clock
        self._stage: str | None = None if start_up is None else START_UP
        self._since = clock()
        self.seconds: dict[str, float] = {} if start_up is None else {START_UP: start_up}

    def __call__(self, event: Event) -> None:
        if isinstance(event, StageStarted):
            self.stop()
            self._stage = event.stage

    def stop(self) -> dict[str, float]:
        """End the stage that is running; the seconds per stage so far, in the order the stages ran."""
        now = self._clock()
        if self._stage is not None:
            self.seconds[self._stage] = self.seconds.get(self._stage, 0.0) + now - self._since
        self._stage, self._since = None, now
        return self.seconds


def describe_stages(seconds: dict[str, float]) -> str:
    """``stages: start-up 1.62 s · purple 0.01 s · … · total 8.80 s``: one line for people."""
    parts = [f"{stage} {value:.2f} s" for stage, value in seconds.items()]
    return "stages: " + " · ".join([*parts, f"total {sum(seconds.values()):.2f} s"])
