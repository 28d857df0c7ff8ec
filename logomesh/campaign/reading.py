"""Reading a campaign's battles from the ledger: which rows belong to the plan, and how one result is read.

Which battles count
-------------------
Every recorded battle of the plan gets one of four outcomes:

* **scored** (``status`` is not ``"failed"``): its ``cis_score`` counts.
* **agent failure** (failed at stage ``purple``): the agent did not deliver a
  submission, so the battle counts as **CIS 0** for its agent.
* **infrastructure failure** (failed at any other stage, a result without a
  finite numeric ``cis_score``, or a row that holds no battle result): the agent
  is not to blame, so the battle is **excluded** from every mean and rate and
  listed separately.
* **cancelled** (``status`` is ``"cancelled"``): someone stopped it; excluded
  from every mean and rate and counted apart.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from logomesh.battle.result import BattleResult, ResultError
from logomesh.battle.scores import COMPONENT_NAMES, PENALTY_NAMES
from logomesh.campaign.model import (
    AGENT_STAGE,
    UNKNOWN,
    BattleFinding,
    BattleRow,
    BattleSummary,
    Outcome,
    RecordedBattle,
)
from logomesh.campaign.plan import CampaignPlan


def _attempts(attributes: object) -> int:
    raw = attributes.get("attempts") if isinstance(attributes, Mapping) else None
    try:
        return max(1, int(str(raw))) if raw is not None else 1
    except ValueError:
        return 1


def input_digests(inputs: object) -> dict[str, str]:
    """Input name -> SHA-256, from a signed entry's ``inputs`` block; entries without a text digest are left out."""
    if not isinstance(inputs, Mapping):
        return {}
    out: dict[str, str] = {}
    for name, info in inputs.items():
        if isinstance(info, Mapping) and isinstance(info.get("sha256"), str):
            out[str(name)] = str(info["sha256"])
    return out


def rows_from_ledger(plan: CampaignPlan, recorded: Sequence[RecordedBattle]) -> list[BattleRow]:
    """The plan's recorded battles, in plan order; ledger rows the plan does not hold are ignored.

    ``recorded`` are ``runner.campaign_battles`` rows. Should a battle id appear twice,
    the first row wins (the ledger never replaces an entry).
    """
    by_id: dict[str, RecordedBattle] = {}
    for row in recorded:
        by_id.setdefault(row.battle_id, row)
    rows: list[BattleRow] = []
    for job in plan.jobs():
        found = by_id.get(job.battle_id)
        if found is None:
            continue
        attributes = found.attributes
        rows.append(
            BattleRow(
                battle_id=job.battle_id,
                agent=job.agent.name,
                task_id=job.task_id,
                repeat=job.repeat,
                result=found.result,
                attempts=_attempts(attributes),
                sequence=found.sequence,
                attributes=dict(attributes),
                input_digests=dict(found.input_digests),
            )
        )
    return rows


def label(value: object) -> str:
    return value if isinstance(value, str) and value else UNKNOWN


def parse_result(result: object, attributes: object) -> BattleResult | None:
    """The stored result, parsed once; ``None`` when it is no battle result. An old result's seed is an attribute."""
    if not isinstance(result, Mapping):
        return None
    seed = _seed_of(attributes.get("seed") if isinstance(attributes, Mapping) else None)
    try:
        return BattleResult.from_json(result, seed=seed)
    except ResultError:
        return None


def hidden_counts(result: BattleResult) -> tuple[int, int]:
    hidden = result.scores.hidden
    return (hidden.passed, hidden.total) if hidden is not None else (0, 0)


def _seed_of(raw: object) -> int | None:
    try:
        return int(str(raw)) if raw is not None else None
    except ValueError:
        return None


def summarise(row: BattleRow) -> BattleSummary:
    """Classify one battle by the policy in the module docstring."""
    result = row.result
    if result is None:
        return _no_result(row)
    outcome: Outcome = "scored"
    cis = result.scores.cis
    stage: str | None = None
    reason: str | None = None
    if result.cancelled:
        stage = label(result.ending.stage)
        outcome, cis, reason = "cancelled", None, result.ending.reason
    elif result.failed:
        stage, reason = label(result.ending.stage), result.ending.reason
        outcome, cis = ("agent_failed", 0.0) if stage == AGENT_STAGE else ("infra_failed", None)
    elif cis is None:
        outcome, stage, reason = "infra_failed", "report", "the recorded result has no finite numeric cis_score"
    passed, total = hidden_counts(result) if outcome == "scored" else (0, 0)
    return BattleSummary(
        battle_id=row.battle_id, agent=row.agent, task_id=row.task_id, repeat=row.repeat, outcome=outcome, cis=cis,
        attempts=row.attempts, findings=len(result.scores.findings), stage=stage, reason=reason,
        sequence=row.sequence, seed=result.seed,
        components={letter: value for letter, _, value in result.scores.components.named()},
        penalties=result.scores.penalties.by_name(),
        hidden_passed=passed, hidden_total=total,
    )


def _no_result(row: BattleRow) -> BattleSummary:
    """A row that holds no battle result: an infrastructure failure, excluded like any other."""
    return BattleSummary(
        battle_id=row.battle_id, agent=row.agent, task_id=row.task_id, repeat=row.repeat, outcome="infra_failed",
        cis=None, attempts=row.attempts, findings=0, stage="report",
        reason="the recorded result is no battle result (it has no status scored, failed or cancelled)",
        sequence=row.sequence, seed=_seed_of(row.attributes.get("seed")),
        components=dict.fromkeys(letter for letter, _ in COMPONENT_NAMES), penalties=dict.fromkeys(PENALTY_NAMES),
        hidden_passed=0, hidden_total=0,
    )


def findings_of(row: BattleRow) -> list[BattleFinding]:
    """The battle's red-agent findings, in the order the result lists them."""
    return [BattleFinding(row.battle_id, row.agent, row.task_id, row.repeat, finding)
            for finding in (row.result.scores.findings if row.result is not None else ())]
