"""The typed record of one battle: what its stages returned, how it ended, and the one builder of its ledger entry.

Each stage of a battle returns a frozen value (the purple ``PurpleExchange``, the
``SandboxUsed``, the ``Measured`` values, the ``ScoreCard``). ``StageValues``
holds those obtained so far, so a battle that fails or is cancelled midway
still entangles everything it got (a purple response whose sandbox then
failed, say). ``played_battle`` turns the values and the ending (``Scored``,
``FailedAt`` or ``CancelledAt``) into the ``PlayedBattle`` the ledger appends:
the result (a ``BattleResult``, flagged truncated where the purple agent reported
its model's answer cut at the token limit), the inputs, the attributes and the intent
vector. Every result, scored, failed or cancelled, is built here and nowhere else.

Recording only reads: what it needs of a stage, the stage's value carries (the
task its spec, drivers, reference and flawed variants; the ``Measured`` the
reference observations and red evidence; the ``ScoreCard`` the intent library
its intent check judged among). It calls into no scoring at run time.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from logomesh.battle.result import BattleResult, RedSettings, ResultEnding, Status
from logomesh.battle.scores import Scores
from logomesh.findings import EVIDENCE_INPUT

if TYPE_CHECKING:
    from logomesh.battle.request import BattleRequest
    from logomesh.purple.exchange import PurpleExchange
    from logomesh.scoring.cis import ScoreCard
    from logomesh.scoring.measure import Measured
    from logomesh.submission import Finish
    from logomesh.tasks import TaskSpec


@dataclass(frozen=True)
class SandboxUsed:
    """The sandbox a battle's code ran in, as the ledger records it."""

    image: str
    backend: str


@dataclass(frozen=True)
class Judged:
    """What the judging stage returns: the box it used, what it measured there, and the score card."""

    sandbox: SandboxUsed
    measured: Measured
    card: ScoreCard


@dataclass
class StageValues:
    """The values the battle's stages have returned so far; each is set once, as its stage completes."""

    exchange: PurpleExchange | None = None
    sandbox: SandboxUsed | None = None
    measured: Measured | None = None


@dataclass(frozen=True)
class Scored:
    card: ScoreCard


@dataclass(frozen=True)
class FailedAt:
    """The battle failed in ``stage``; ``reason`` is one line."""

    stage: str
    reason: str


@dataclass(frozen=True)
class CancelledAt:
    """The battle was cancelled while in ``stage``."""

    stage: str
    reason: str


Ending = Scored | FailedAt | CancelledAt


class ResultStatus:
    """``failed`` and ``cancelled``, read from the ending of the class's ``result``."""

    result: BattleResult

    @property
    def failed(self) -> bool:
        return self.result.failed

    @property
    def cancelled(self) -> bool:
        return self.result.cancelled


@dataclass(frozen=True)
class PlayedBattle(ResultStatus):
    """A battle played but not yet recorded: its result and what the ledger entangles with it."""

    result: BattleResult
    inputs: dict[str, bytes]
    attributes: dict[str, str]
    intent_vector: list[float] | None


def played_battle(request: BattleRequest, task: TaskSpec | None, values: StageValues, ending: Ending) -> PlayedBattle:
    """The one builder of a battle's ledger entry; ``task`` is ``None`` when it could not even be loaded."""
    inputs = task_inputs(task) if task is not None else {}
    attributes = _request_attributes(request)
    finish = values.exchange.submission.finish if values.exchange is not None else None
    if values.exchange is not None:
        inputs["purple_request"] = values.exchange.request_bytes
        inputs["purple_response"] = values.exchange.response_bytes
        attributes["purple_protocol"] = values.exchange.protocol
    if values.sandbox is not None:
        attributes["sandbox_image"] = values.sandbox.image
        attributes["sandbox_backend"] = values.sandbox.backend
    if values.measured is not None:
        inputs.update(_measured_inputs(values.measured))
    if not isinstance(ending, Scored):
        return PlayedBattle(_unscored_result(request, ending, finish), inputs, attributes, None)
    config = ending.card.config
    inputs["intent_library"] = ending.card.intent_library  # the intents the check judged among: replay needs them
    attributes["scorer_config_sha256"] = config.sha256()
    for name, model in sorted(config.model_ids().items()):
        attributes[f"model:{name}"] = model
    return PlayedBattle(scored_result(request, ending.card, finish), inputs, attributes, ending.card.intent_vector)


def failed_played(request: BattleRequest, stage: str, reason: str) -> PlayedBattle:
    """A battle that failed before any stage could run (for callers that play battles elsewhere)."""
    return played_battle(request, None, StageValues(), FailedAt(stage, reason))


def scored_result(request: BattleRequest, card: ScoreCard, finish: Finish | None = None) -> BattleResult:
    """A scored battle's result: the card's fields, parsed once, the settings it was judged with, and how the
    purple's model answer ended where the agent reported it (``Submission.finish``)."""
    return BattleResult(request.battle_id, request.task_id, request.seed, request.purple_label,
                        ResultEnding("scored"), Scores.from_card(card),
                        RedSettings(request.red, request.red_budget_s if request.red else 0.0), finish)


def _unscored_result(request: BattleRequest, ending: FailedAt | CancelledAt, finish: Finish | None) -> BattleResult:
    """Zeros, and the stage and reason it stopped with (``failed_stage`` or ``stage`` in the JSON)."""
    zero = {"passed": 0, "failed": 0, "total": 0}
    scores: dict[str, Any] = {
        "rationale_score": 0.0,
        "architecture_score": 0.0,
        "testing_score": 0.0,
        "logic_score": 0.0,
        "cis_score": 0.0,
        "red_penalty_applied": 0.0,
        "intent_penalty": 1.0,
        "red_analysis": {
            "attack_successful": False,
            "vulnerability_count": 0,
            "max_severity": "low",
            "vulnerabilities": [],
        },
        "tests": {"hidden": dict(zero), "purple": dict(zero)},
        "anchors": {},
        "llm_adjustments": {},
    }
    status: Status = "failed" if isinstance(ending, FailedAt) else "cancelled"
    return BattleResult(request.battle_id, request.task_id, request.seed, request.purple_label,
                        ResultEnding(status, ending.stage, ending.reason), Scores.from_json(scores), finish=finish)


def task_inputs(task: TaskSpec) -> dict[str, bytes]:
    """The task as the battle judged it: spec, hidden drivers, reference, flawed variants and red.py if any (also
    what an injection attempt's entry keeps of its task, ``inject/record.py``: replay rebuilds it from them)."""
    return {"task_spec": task.spec_bytes, "hidden_tests": task.hidden_bytes,
            "reference_solution": task.reference_bytes, "flawed_variants": task.variants_bytes,
            **_red_module(task)}


def _measured_inputs(measured: Measured) -> dict[str, bytes]:
    """What the hidden verdicts were judged against and, outside H(Δ), what the red agent measured."""
    inputs = {"reference_observations": measured.reference_observations}
    if measured.findings:
        inputs[EVIDENCE_INPUT] = json.dumps(
            [{"family": f.family, "summary": f.summary, "evidence": f.evidence} for f in measured.findings],
            sort_keys=True, ensure_ascii=False).encode("utf-8")
    return inputs


def _red_module(task: TaskSpec) -> dict[str, bytes]:
    """The task's red.py (its red-agent scenarios), when it has one: an input of the red agent's findings."""
    from logomesh.red.scenarios import MODULE_FILE

    path = task.root / MODULE_FILE
    return {"red_module": path.read_bytes()} if path.is_file() else {}


def _request_attributes(request: BattleRequest) -> dict[str, str]:
    """The attributes every entry carries, scored or failed."""
    attributes = {"purple_agent": request.purple_label, "seed": str(request.seed)}
    if request.campaign_id:
        attributes["campaign_id"] = request.campaign_id
    return attributes
