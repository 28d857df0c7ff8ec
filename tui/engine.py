"""The one place where the battle engine becomes Textual messages.

``BattleRunner`` runs ``run_battle`` (or any function with its signature) in a
thread worker. The engine's ``EventSink`` only appends to a locked buffer, so
the engine never waits on the UI. A 50 ms timer on the UI thread drains the
buffer and posts one ``BattleEventsReceived`` per batch, then ``BattleEnded``
once the engine has returned. No event is dropped; within a batch, repeated
``MctsNodeUpdated`` for the same node collapse to the last one, which is the
only one a widget would show.

Cancel (Esc) cancels the battle's ``CancelToken``, which the runner puts in the
request: the real engine abandons the purple agent's request or kills the
sandbox and records the battle as ``cancelled`` within about a second. An
engine that ignores the token is stopped by its next event, which raises
``Cancelled`` inside it.
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from textual.timer import Timer
from textual.widget import Widget

from logomesh.battle.request import BattleRequest, BattleSetupError
from logomesh.battle.spine import BattleOutcome
from logomesh.cancel import CANCEL_REASON, Cancelled, CancelToken
from logomesh.events import (
    BattleCancelled,
    BattleFailed,
    BattleFinished,
    Event,
    EventSink,
    LedgerAppended,
    MctsNodeUpdated,
    StageStarted,
)
from tui.messages import BattleEnded, BattleEventsReceived

Engine = Callable[[BattleRequest, EventSink], BattleOutcome]

FLUSH_INTERVAL_S = 0.05
MAX_BATCH = 2000  # events handled per tick at most, so a burst cannot freeze a frame


def default_engine(request: BattleRequest, emit: EventSink) -> BattleOutcome:
    from logomesh.battle.spine import run_battle

    return run_battle(request, emit)


@dataclass(frozen=True)
class _Ending:
    """How the run ended: the recorded battle's ending, or ``error``/``cancelled`` when nothing was recorded."""

    status: str
    cis_score: float | None
    sequence: int | None
    reason: str

    @classmethod
    def recorded(cls, outcome: BattleOutcome) -> _Ending:
        """The ledger's word on the battle: its status, CIS and reason as recorded, never re-derived here."""
        result = outcome.result
        return cls(result.status, result.cis_score, outcome.sequence, result.ending.reason)


def coalesce_updates(events: Sequence[Event]) -> list[Event]:
    """Drop every ``MctsNodeUpdated`` that a later one for the same node supersedes; keep order."""
    last: dict[int, int] = {}
    for index, event in enumerate(events):
        if isinstance(event, MctsNodeUpdated):
            last[event.node_id] = index
    return [
        event
        for index, event in enumerate(events)
        if not isinstance(event, MctsNodeUpdated) or last[event.node_id] == index
    ]


def _passes_after_cancel(event: Event) -> bool:
    """Events the engine emits while recording a battle: they must reach the UI, never raise."""
    if isinstance(event, StageStarted):
        return event.stage == "ledger"
    return isinstance(event, BattleCancelled | BattleFailed | LedgerAppended | BattleFinished)


class BattleRunner:
    """Runs one battle off the UI thread and feeds its events to ``target`` as batched messages."""

    def __init__(self, target: Widget, engine: Engine = default_engine) -> None:
        self._target = target
        self._engine = engine
        self._lock = threading.Lock()
        self._buffer: list[Event] = []
        self._ending: _Ending | None = None
        self._cancel = threading.Event()
        self._token = CancelToken()
        self._recording = False
        self._timer: Timer | None = None
        self.running = False
        self.events_seen = 0

    def start(self, request: BattleRequest) -> None:
        """Start ``request`` in a thread worker; call on the UI thread."""
        if self.running:
            raise RuntimeError("a battle is already running")
        self.running = True
        self._cancel.clear()
        self._token = CancelToken()
        request = dataclasses.replace(request, cancel=self._token)
        self._recording = False
        self._ending = None
        self._timer = self._target.set_interval(FLUSH_INTERVAL_S, self.flush)
        self._target.run_worker(lambda: self._run(request), thread=True, group="battle", name=request.battle_id)

    def cancel(self) -> None:
        """Stop the battle: cancel its token (see the module docstring); returns at once."""
        if self.running:
            self._cancel.set()
            self._token.cancel(CANCEL_REASON)

    @property
    def cancelling(self) -> bool:
        return self._cancel.is_set()

    def emit(self, event: Event) -> None:
        """The engine's ``EventSink``: never blocks beyond a short lock."""
        if self._cancel.is_set() and not self._recording:
            if not _passes_after_cancel(event):
                raise Cancelled(CANCEL_REASON)
            self._recording = True
        with self._lock:
            self._buffer.append(event)

    def _run(self, request: BattleRequest) -> None:
        try:
            outcome = self._engine(request, self.emit)
        except Cancelled:
            ending = _Ending("cancelled", None, None, CANCEL_REASON)
        except BattleSetupError as exc:
            ending = _Ending("error", None, None, str(exc))
        except Exception as exc:  # the UI must survive any engine crash
            ending = _Ending("error", None, None, f"{type(exc).__name__}: {exc}".splitlines()[0])
        else:
            ending = _Ending.recorded(outcome)
        with self._lock:
            self._ending = ending

    def flush(self) -> None:
        """Drain the buffer into one message; once the engine is done and drained, post ``BattleEnded``."""
        with self._lock:
            events = self._buffer[:MAX_BATCH]
            del self._buffer[:MAX_BATCH]
            ending = self._ending if not self._buffer else None
        if events:
            self.events_seen += len(events)
            self._target.post_message(BattleEventsReceived(coalesce_updates(events)))
        if ending is not None and self.running:
            self.running = False
            if self._timer is not None:
                self._timer.stop()
                self._timer = None
            self._target.post_message(BattleEnded(ending.status, ending.cis_score, ending.sequence, ending.reason))
