"""Messages that cross from the engine adapter, the campaign runner and the ledger workers into the UI.

Named in the past tense: each reports something that already happened.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from textual.message import Message

from logomesh.campaign.model import BattleFinding, BattleRow, Cell, Comparison, LeaderRow
from logomesh.campaign.runner import CampaignProgress
from logomesh.events import Event
from tui.ledger_source import LedgerRow

if TYPE_CHECKING:
    from logomesh.inject.attempts import AttemptRecord
    from logomesh.inject.run import InjectOutcome


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


class CampaignProgressed(Message):
    """The campaign moved on: ``progress`` as of now, and the battles recorded since the last message."""

    def __init__(self, progress: CampaignProgress, rows: Sequence[BattleRow]) -> None:
        super().__init__()
        self.progress = progress
        self.rows = tuple(rows)


class CampaignEnded(Message):
    """The campaign driver returned (``finished``), was cancelled, or failed (``error``, with the reason).

    ``progress`` is the last one the driver reported, None if it failed before reporting any.
    """

    def __init__(self, status: str, progress: CampaignProgress | None, reason: str = "") -> None:
        super().__init__()
        self.status = status
        self.progress = progress
        self.reason = reason


class LeaderboardComputed(Message):
    """The campaign report was rebuilt from ``battles`` recorded battles, or building it failed (``error``).

    ``ranked`` is the report's leaderboard; ``unranked`` holds (agent, battles) for agents without a
    counted battle yet; ``comparisons``, ``cells`` and ``findings`` feed the pairs, per-task and findings views.
    """

    def __init__(self, ranked: Sequence[LeaderRow], unranked: Sequence[tuple[str, int]], battles: int,
                 error: str = "", cells: Sequence[Cell] = (), findings: Sequence[BattleFinding] = (),
                 comparisons: Sequence[Comparison] = ()) -> None:
        super().__init__()
        self.ranked = tuple(ranked)
        self.unranked = tuple(unranked)
        self.battles = battles
        self.error = error
        self.cells = tuple(cells)  # the per-task view: one per task × agent
        self.findings = tuple(findings)  # the findings view, worst first
        self.comparisons = tuple(comparisons)  # the pairs view: every pair of ranked agents


class InjectionNodeAdded(Message):
    """The injection search added a node; ``path`` is its choices (``placement``, ``framing``, …), root ``()``."""

    def __init__(self, node_id: int, parent_id: int | None, action: str, path: tuple[str, ...]) -> None:
        super().__init__()
        self.node_id = node_id
        self.parent_id = parent_id
        self.action = action
        self.path = path


class InjectionNodeUpdated(Message):
    """The injection search visited a node: its visits and mean value now."""

    def __init__(self, node_id: int, visits: int, mean_value: float) -> None:
        super().__init__()
        self.node_id = node_id
        self.visits = visits
        self.mean_value = mean_value


class AttemptJudged(Message):
    """One query of the injection run was sent, answered, judged by its oracle and recorded."""

    def __init__(self, record: AttemptRecord) -> None:
        super().__init__()
        self.record = record


class InjectionEnded(Message):
    """The run returned (``finished``, with ``outcome``), was cancelled, or could not run (``error``, ``reason``).

    ``recorded`` says whether the run's entry went to the ledger (a finished or cancelled run with a home)."""

    def __init__(self, status: str, outcome: InjectOutcome | None, reason: str = "", recorded: bool = False) -> None:
        super().__init__()
        self.status = status
        self.outcome = outcome
        self.reason = reason
        self.recorded = recorded
