"""What a campaign report holds: the battles as read from the ledger, and every figure built from them.

Pure data; ``aggregate`` builds it, ``report_json``, ``report_text`` and
``html_report`` show it, and ``verify_report`` recomputes it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

from logomesh.campaign.stats import Interval
from logomesh.findings import SEVERITY_ORDER, Finding, Severity

if TYPE_CHECKING:
    from logomesh.battle.result import BattleResult

Outcome = Literal["scored", "agent_failed", "infra_failed", "cancelled"]
FailureKind = Literal["agent", "infrastructure"]
AGENT_STAGE = "purple"
CANCELLED = "cancelled"
UNKNOWN = "unknown"
SEVERITIES: tuple[str, ...] = tuple(reversed(SEVERITY_ORDER))
"""Severities worst first: the order every report lists them in."""

POLICY = (
    "A battle failed at stage 'purple' counts as CIS 0 for its agent; battles failed at any other "
    "(infrastructure) stage are excluded from means and rates and listed separately; so are cancelled battles, "
    "counted apart."
)


@dataclass(frozen=True)
class RecordedBattle:
    """One battle of a campaign as the ledger signed it, read once (``runner.campaign_battles``)."""

    sequence: int
    battle_id: str
    result: BattleResult | None  # None when the signed result is no battle result (``reading.parse_result``)
    attributes: Mapping[str, str]  # the signed attributes (campaign id, attempts, seed, ...)
    input_digests: Mapping[str, str]  # input name -> its signed SHA-256 (``reading.input_digests``)


@dataclass(frozen=True)
class BattleRow:
    """One recorded battle of the plan: its job's coordinates, the ledger's result and where it sits in the ledger."""

    battle_id: str
    agent: str
    task_id: str
    repeat: int
    result: BattleResult | None  # None: the ledger row holds no battle result (no status, or not an object)
    attempts: int = 1
    sequence: int | None = None
    attributes: dict[str, str] = field(default_factory=dict)
    input_digests: dict[str, str] = field(default_factory=dict)
    """Input name -> SHA-256, from the signed DBOM (the task library the battle was judged on)."""


@dataclass(frozen=True)
class BattleFinding:
    """One entry of a battle's ``red_analysis.vulnerabilities``: the finding, and the battle it was found in.

    ``finding`` is what ``battle/scores.py::read_finding`` read, so its severity is ``None`` when the entry
    names none of the four; the labels below are what reports show for it."""

    battle_id: str
    agent: str
    task_id: str
    repeat: int
    finding: Finding[Severity | None]

    @property
    def family_label(self) -> str:
        """The family, or ``unknown`` when the entry names none."""
        return self.finding.family or UNKNOWN

    @property
    def severity_label(self) -> str:
        """The severity, or ``unknown`` when the entry names none of the four (listed after them)."""
        return self.finding.severity or UNKNOWN


@dataclass(frozen=True)
class BattleSummary:
    """How the report reads one battle: the per-battle table's row."""

    battle_id: str
    agent: str
    task_id: str
    repeat: int
    outcome: Outcome
    cis: float | None
    attempts: int
    findings: int
    stage: str | None = None
    reason: str | None = None
    sequence: int | None = None
    seed: int | None = None
    components: dict[str, float | None] = field(default_factory=dict)
    """R, A, T, L: the rationale, architecture, testing and logic scores."""
    penalties: dict[str, float | None] = field(default_factory=dict)
    """red (the share taken off: × (1 − red)), intent and behaviour (multipliers), as the result records them."""
    hidden_passed: int = 0
    hidden_total: int = 0

    @property
    def passed(self) -> bool:
        """Counted and every hidden test passed (a purple failure never passes)."""
        return self.outcome == "scored" and self.hidden_total > 0 and self.hidden_passed == self.hidden_total


@dataclass(frozen=True)
class Cell:
    """One (agent, task): its repeats summarised; the spread is min..max over counted repeats."""

    agent: str
    task_id: str
    planned: int
    recorded: int
    scored: int
    agent_failed: int
    infra_failed: int
    cancelled: int
    mean_cis: float | None
    cis_min: float | None
    cis_max: float | None
    hidden_passed: int
    hidden_total: int
    pass_interval: Interval
    findings: int
    solved: int
    """Counted repeats that passed every hidden test."""

    @property
    def counted(self) -> int:
        return self.scored + self.agent_failed

    @property
    def pass_rate(self) -> float | None:
        return self.hidden_passed / self.hidden_total if self.hidden_total else None

    @property
    def scored_share(self) -> float | None:
        return self.scored / self.recorded if self.recorded else None


@dataclass(frozen=True)
class PassAtK:
    k: int
    tasks: int
    pass_at_k: float
    pass_hat_k: float


@dataclass(frozen=True)
class LeaderRow:
    """One ranked agent; ``battles == scored + failed + cancelled`` (failed = agent and infrastructure failures).

    ``mean_cis`` is the mean over tasks of each task's mean; ``interval`` treats the task as the unit.
    ``rank`` is 1 + the number of agents shown better by a paired comparison; ``tied`` when another agent
    has the same rank.
    """

    rank: int
    agent: str
    mean_cis: float
    interval: Interval
    tasks: int
    battles: int
    scored: int
    failed: int
    cancelled: int
    solved_tasks: int
    solved_interval: Interval
    pass_k: PassAtK | None = None
    tied: bool = False

    @property
    def ci_low(self) -> float | None:
        return self.interval.low

    @property
    def ci_high(self) -> float | None:
        return self.interval.high


@dataclass(frozen=True)
class Comparison:
    """Agent ``first`` minus agent ``second`` on the tasks both have counted battles on."""

    first: str
    second: str
    shared_tasks: int
    mean_difference: float | None
    interval: Interval
    first_only: int
    """Shared tasks ``first`` solved (every counted repeat passed every hidden test) and ``second`` did not."""
    second_only: int
    mcnemar_p: float | None

    @property
    def verdict(self) -> str:
        """``first``, ``second`` (the better one) or ``tie`` when the interval contains 0 or is refused."""
        if not self.interval.ok or self.interval.contains(0.0):
            return "tie"
        return self.first if (self.interval.low or 0.0) > 0 else self.second


@dataclass(frozen=True)
class FamilyFindings:
    family: str
    total: int
    by_severity: dict[str, int]


@dataclass(frozen=True)
class FailureGroup:
    kind: FailureKind
    stage: str
    reason: str
    count: int
    battle_ids: list[str]


@dataclass(frozen=True)
class CancelledGroup:
    stage: str
    count: int
    battle_ids: list[str]


@dataclass(frozen=True)
class Retry:
    battle_id: str
    attempts: int
    outcome: Outcome


@dataclass(frozen=True)
class Provenance:
    """What the report was computed from: enough to find and check every entry it rests on."""

    logomesh_version: str
    campaign_seed: int
    red_enabled: bool
    red_budget_s: float
    sandbox: str
    scoring_config_sha256: list[str]
    task_library_sha256: str | None
    task_inputs: dict[str, str]
    """Task id -> SHA-256 of its inputs' digests as the entries record them."""
    checkpoint_size: int | None
    checkpoint_root: str | None
    checkpoint_note: str | None
    checkpoint_time: str | None


@dataclass(frozen=True)
class CampaignReport:
    campaign_id: str
    agents: list[str]
    task_ids: list[str]
    repeat: int
    planned: int
    recorded: int
    missing: list[str]
    battles: list[BattleSummary]
    cells: list[Cell]
    leaderboard: list[LeaderRow]
    unranked: list[str]
    comparisons: list[Comparison]
    findings: list[BattleFinding]
    findings_by_severity: dict[str, int]
    findings_by_family: list[FamilyFindings]
    failures: list[FailureGroup]
    cancellations: list[CancelledGroup]
    retries: list[Retry]
    provenance: Provenance | None = None

    @property
    def findings_total(self) -> int:
        return sum(self.findings_by_severity.values())

    @property
    def agent_failures(self) -> int:
        return sum(1 for b in self.battles if b.outcome == "agent_failed")

    @property
    def infra_failures(self) -> int:
        return sum(1 for b in self.battles if b.outcome == "infra_failed")

    @property
    def cancelled(self) -> int:
        return sum(1 for b in self.battles if b.outcome == "cancelled")

    def rank_order(self) -> list[str]:
        """Agents in leaderboard order, unranked last."""
        return [row.agent for row in self.leaderboard] + list(self.unranked)
