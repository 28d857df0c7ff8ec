"""Typed events every battle stage emits.

Frozen dataclasses with no UI imports: the Textual console and the headless
progress printer are two consumers of the same stream. An ``EventSink`` is any
callable taking an ``Event``; stages never block on it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import ClassVar, Literal

from logomesh.submission import Finish

Stream = Literal["stdout", "stderr"]
TestSuite = Literal["hidden", "purple"]
TestStatus = Literal["passed", "failed", "error", "timeout", "crashed"]
ComponentFact = float | Sequence[Mapping[str, str | int]] | Mapping[str, float]
"""One fact behind a CIS component (``ScoreComponent.details``): a figure (an int or a float), records
(architecture's violations, as their JSON) or a figure per part (logic's parts)."""


@dataclass(frozen=True)
class BattleStarted:
    battle_id: str
    task_id: str
    purple: str
    seed: int


@dataclass(frozen=True)
class StageStarted:
    """A battle stage begins: ``purple``, ``sandbox``, ``red``, ``scoring`` or ``ledger``."""

    battle_id: str
    stage: str


@dataclass(frozen=True)
class PurpleResponded:
    battle_id: str
    source_bytes: int
    test_bytes: int
    rationale_chars: int
    response_sha256: str


@dataclass(frozen=True)
class PurpleFinishReported:
    """How the purple's model answer ended, as the agent reported it: ``finish.truncated`` when it was cut at the
    token limit. Emitted after ``PurpleResponded`` only by a battle whose agent reported it (not by mocks)."""

    battle_id: str
    finish: Finish


@dataclass(frozen=True)
class SandboxOutput:
    battle_id: str
    origin: str
    stream: Stream
    text: str


@dataclass(frozen=True)
class TestResult:
    __test__: ClassVar[bool] = False  # not a pytest test class, despite its name

    battle_id: str
    suite: TestSuite
    name: str
    status: TestStatus
    reason: str = ""


@dataclass(frozen=True)
class MctsNodeAdded:
    battle_id: str
    node_id: int
    parent_id: int | None
    action: str


@dataclass(frozen=True)
class MctsNodeUpdated:
    battle_id: str
    node_id: int
    visits: int
    mean_value: float


@dataclass(frozen=True)
class FindingConfirmed:
    battle_id: str
    family: str
    severity: str
    cwe: str
    summary: str
    node_id: int | None = None


@dataclass(frozen=True)
class ScoreComponent:
    """One CIS component: ``rationale``, ``architecture``, ``testing`` or ``logic``."""

    battle_id: str
    name: str
    value: float
    details: Mapping[str, ComponentFact] = field(default_factory=dict)


@dataclass(frozen=True)
class PenaltyApplied:
    battle_id: str
    name: str
    factor: float
    reason: str


@dataclass(frozen=True)
class CorrectnessBand:
    """The last step of the CIS: ``within`` (x, every penalty applied) placed in its band.

    ``cis = boundary + (1 − boundary)·x`` when ``all_passed`` (every hidden test passed), else ``boundary·x``.
    """

    battle_id: str
    all_passed: bool
    boundary: float
    within: float
    cis: float
    reason: str


@dataclass(frozen=True)
class BattleFinished:
    battle_id: str
    cis_score: float
    status: str


@dataclass(frozen=True)
class LedgerAppended:
    battle_id: str
    sequence: int
    result_sha256: str
    path: str


@dataclass(frozen=True)
class BattleFailed:
    battle_id: str
    stage: str
    reason: str


@dataclass(frozen=True)
class BattleCancelled:
    """The battle stopped in ``stage`` because its caller cancelled it; it is recorded as ``cancelled``."""

    battle_id: str
    stage: str
    reason: str


Event = (
    BattleStarted
    | StageStarted
    | PurpleResponded
    | PurpleFinishReported
    | SandboxOutput
    | TestResult
    | MctsNodeAdded
    | MctsNodeUpdated
    | FindingConfirmed
    | ScoreComponent
    | PenaltyApplied
    | CorrectnessBand
    | BattleFinished
    | LedgerAppended
    | BattleFailed
    | BattleCancelled
)
EventSink = Callable[[Event], None]


def discard(event: Event) -> None:
    """An ``EventSink`` that drops every event."""


def fan_out(*sinks: EventSink) -> EventSink:
    """One ``EventSink`` that hands each event to every one of ``sinks``, in order."""

    def each(event: Event) -> None:
        for sink in sinks:
            sink(event)

    return each
