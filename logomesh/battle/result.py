"""``BattleResult``: one battle's result, typed, and its JSON form (the ledger's ``result``).

A result names the battle, its task, seed and purple agent, how it ended (``ResultEnding``: scored,
or failed or cancelled at a stage, with a reason) and the scorer's figures (``scores``: a typed ``Scores``,
parsed once from the score card's fields when scored, from zeros when not; ``battle/scores.py``).
``record.played_battle`` builds every result; the ledger boundary turns it into JSON with ``to_json``
and a reader of the ledger parses it back once with ``from_json``. The JSON keys are the ones results
have always had: a failed result names its stage ``failed_stage``, a cancelled one ``stage``;
``ResultEnding.stage`` is either. Where the purple agent reported how its model's answer ended (the LLM
purple agent does), ``finish`` holds it and the JSON carries ``purple_finish``:
``{"finish_reason": "length", "truncated": true}`` for an answer cut at the token limit; results of agents
that report nothing (mocks) have no such key, exactly as before.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from logomesh.battle.scores import Scores
from logomesh.submission import Finish

Status = Literal["scored", "failed", "cancelled"]
STATUSES: tuple[Status, ...] = ("scored", "failed", "cancelled")
_STAGE_KEY = {"failed": "failed_stage", "cancelled": "stage"}  # the JSON key of the stage an ending stopped at
FINISH_KEY = "purple_finish"
_OWN_KEYS = frozenset({"battle_id", "task_id", "status", "failed_stage", "stage", "reason", "seed", "purple_agent",
                       "red_enabled", "red_budget_s", FINISH_KEY})


class ResultError(ValueError):
    """A stored result that is not a battle result (no status, or a wrong type for a field)."""


@dataclass(frozen=True)
class ResultEnding:
    """How the battle ended: ``scored``, or ``failed``/``cancelled`` at ``stage`` for ``reason``."""

    status: Status
    stage: str = ""  # the stage it stopped at; "" when scored
    reason: str = ""

    @property
    def scored(self) -> bool:
        return self.status == "scored"

    @property
    def failed(self) -> bool:
        return self.status == "failed"

    @property
    def cancelled(self) -> bool:
        return self.status == "cancelled"


@dataclass(frozen=True)
class RedSettings:
    """The red agent's settings a scored battle was judged with."""

    enabled: bool
    budget_s: float


@dataclass(frozen=True)
class BattleResult:
    """One battle's result; ``scores`` is the scorer's part."""

    battle_id: str
    task_id: str
    seed: int
    purple_agent: str
    ending: ResultEnding
    scores: Scores
    red: RedSettings | None = None  # scored results only
    finish: Finish | None = None  # how the purple's model answer ended, where the agent reported it

    @property
    def truncated(self) -> bool:
        """The purple agent reported that its model's answer was cut at the token limit."""
        return self.finish is not None and self.finish.truncated is True

    @property
    def status(self) -> Status:
        return self.ending.status

    @property
    def failed(self) -> bool:
        return self.ending.failed

    @property
    def cancelled(self) -> bool:
        return self.ending.cancelled

    @property
    def cis_score(self) -> float:
        """The CIS, 0.0 when absent or not a finite number (a result recorded by hand, or tampered with)."""
        return self.scores.cis if self.scores.cis is not None else 0.0

    def to_json(self) -> dict[str, Any]:
        """The result as the ledger signs it: exactly the keys and values results have always had."""
        out: dict[str, Any] = {"battle_id": self.battle_id, "task_id": self.task_id, **self.scores.to_json(),
                               "status": self.status}
        if not self.ending.scored:
            out[_STAGE_KEY[self.status]] = self.ending.stage
            out["reason"] = self.ending.reason
        out["seed"] = self.seed
        out["purple_agent"] = self.purple_agent
        if self.red is not None:
            out["red_enabled"] = self.red.enabled
            out["red_budget_s"] = self.red.budget_s
        if self.finish is not None:
            out[FINISH_KEY] = self.finish.to_json()
        return out

    @classmethod
    def from_json(cls, result: Mapping[str, Any], *, seed: int | None = None, purple_agent: str = "") -> BattleResult:
        """Parse a stored result once; ``seed`` and ``purple_agent`` stand in where an old result lacks them.

        Raises ``ResultError`` for what is no battle result (a key rotation's entry, say).
        """
        status = result.get("status")
        if status not in STATUSES:
            raise ResultError(f"the result's status is {status!r}, not one of {', '.join(STATUSES)}")
        stage = result.get(_STAGE_KEY.get(str(status), ""), "") if status != "scored" else ""
        raw_seed = result.get("seed", seed)
        try:
            parsed_seed = int(str(raw_seed)) if raw_seed is not None and not isinstance(raw_seed, bool) else 0
        except ValueError:
            parsed_seed = 0
        red = None
        if "red_enabled" in result:
            red = RedSettings(bool(result.get("red_enabled")), _number(result.get("red_budget_s")))
        return cls(battle_id=str(result.get("battle_id", "")), task_id=str(result.get("task_id", "")),
                   seed=parsed_seed, purple_agent=str(result.get("purple_agent") or purple_agent),
                   ending=ResultEnding(status, str(stage or ""), str(result.get("reason") or "")),
                   scores=Scores.from_json({k: v for k, v in result.items() if k not in _OWN_KEYS}), red=red,
                   finish=Finish.from_json(result.get(FINISH_KEY)) if FINISH_KEY in result else None)


def _number(value: object) -> float:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else 0.0
