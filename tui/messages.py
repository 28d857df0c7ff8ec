"""Messages that cross from the engine adapter and the ledger workers into the UI.

Named in the past tense: each reports something that already happened.
"""

from __future__ import annotations

from collections.abc import Sequence

from textual.message import Message

from logomesh.events import Event
from tui.ledger_source import LedgerRow


class BattleEventsReceived(Message):
    """A batch of engine events, in the order the engine emitted them."""

    def __init__(self, events: Sequence[Event]) -> None:
        super().__init__()
        self.events = tuple(events)


class BattleEnded(Message):
    """The engine returned (``status`` scored/failed), was cancelled, or could not start (``error``)."""

    def __init__(self, status: str, cis_score: float | None, sequence: int | None, reason: str = "") -> None:
        super().__init__()
        self.status = status
        self.cis_score = cis_score
        self.sequence = sequence
        self.reason = reason


class VerifyProgressed(Message):
    """The ledger verification has checked ``done`` of ``total`` entries."""

    def __init__(self, done: int, total: int) -> None:
        super().__init__()
        self.done = done
        self.total = total


class LedgerVerified(Message):
    """The verification finished: ``marks`` maps sequence to (ok, reason); ``summary`` is one line."""

    def __init__(self, marks: dict[int, tuple[bool, str]], ok: bool, summary: str) -> None:
        super().__init__()
        self.marks = marks
        self.ok = ok
        self.summary = summary


class BundleExported(Message):
    """A compliance bundle was written (``path``), or writing it failed (``error``)."""

    def __init__(self, path: str | None, count: int, error: str = "") -> None:
        super().__init__()
        self.path = path
        self.count = count
        self.error = error


class LedgerLoaded(Message):
    """The ledger's rows were read (``rows``), or reading failed (``error``)."""

    def __init__(self, rows: list[LedgerRow], error: str = "") -> None:
        super().__init__()
        self.rows = rows
        self.error = error
