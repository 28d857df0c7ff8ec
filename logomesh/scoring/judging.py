"""``Judging``: what a judgement depends on besides the task, the submission and the battle's context."""

from __future__ import annotations

from dataclasses import dataclass

from logomesh.scoring.config import DEFAULT_CONFIG, ScoringConfig


@dataclass(frozen=True)
class Judging:
    """The settings of one measure-then-score; the seed is the battle context's (``BattleContext.seed``)."""

    red: bool
    red_budget_s: float = 10.0
    config: ScoringConfig = DEFAULT_CONFIG
    variants: dict[str, str] | None = None  # the task's flawed variants, if the caller has them (else read)
