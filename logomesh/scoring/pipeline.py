"""Measure, then score: the one pipeline by which a battle, a replay, ``logomesh score`` and ``calibrate`` judge.

``measure_and_score`` opens the sandbox it is given, measures the submission
there (``measure.py``: hidden suite, purple tests, flawed variants, red
agent), closes it, and scores what was measured (``cis.score_submission``).
Whoever calls it gets the same card for the same submission, settings and
seed. ``score_measured`` is the one place a ``Measured`` is taken apart for
scoring.

With a cancel token, scoring runs on a thread of its own that a cancel
abandons (it only computes), and its events stop once the token is cancelled.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import TYPE_CHECKING

from logomesh.cancel import CancelToken, abandon_on_cancel
from logomesh.events import Event, EventSink, StageStarted, discard
from logomesh.scoring.cis import ScoreCard, score_submission
from logomesh.scoring.config import DEFAULT_CONFIG, ScoringConfig
from logomesh.scoring.measure import Measured, measure

if TYPE_CHECKING:
    from logomesh.sandbox import Sandbox
    from logomesh.submission import Submission
    from logomesh.tasks import TaskSpec


@dataclass(frozen=True)
class Judging:
    """What a judgement depends on besides the task and the submission."""

    red: bool
    red_budget_s: float = 10.0
    seed: int = 0
    config: ScoringConfig = DEFAULT_CONFIG
    variants: dict[str, str] | None = None  # the task's flawed variants, if the caller has them (else read)


@dataclass(frozen=True)
class ScoredSubmission:
    """What the pipeline returns: what it measured and the score card made from it."""

    measured: Measured
    card: ScoreCard


def score_measured(
    task: TaskSpec, submission: Submission, measured: Measured, config: ScoringConfig, *, battle_id: str = "",
    emit: EventSink = discard,
) -> ScoreCard:
    """The score card of ``submission`` from what was ``measured`` of it."""
    return score_submission(task, submission, measured.hidden, measured.purple, measured.findings, config=config,
                            battle_id=battle_id, emit=emit, mutants=measured.mutants, red=measured.red)


def measure_and_score(
    task: TaskSpec,
    submission: Submission,
    sandbox: AbstractContextManager[Sandbox],
    judging: Judging,
    *,
    battle_id: str = "",
    emit: EventSink = discard,
    cancel: CancelToken | None = None,
    on_measured: Callable[[Measured], None] | None = None,
) -> ScoredSubmission:
    """Measure ``submission`` in the box ``sandbox`` opens, close it, then score.

    ``on_measured`` sees the measurements as soon as they are made, before the box closes (a battle records
    them then, so one cancelled while scoring still holds them). Events go to ``emit``; the scoring stage
    starts with ``StageStarted("scoring")``.
    """
    token = cancel or CancelToken()
    with sandbox as box:
        measured = measure(task, submission, box, red=judging.red, red_budget_s=judging.red_budget_s,
                           seed=judging.seed, battle_id=battle_id, emit=emit, variants=judging.variants,
                           cancel=token)
        if on_measured is not None:
            on_measured(measured)
    token.check()
    emit(StageStarted(battle_id, "scoring"))
    if cancel is None:
        return ScoredSubmission(measured, score_measured(task, submission, measured, judging.config,
                                                         battle_id=battle_id, emit=emit))

    def quiet_once_cancelled(event: Event) -> None:
        if not cancel.cancelled:
            emit(event)

    card = abandon_on_cancel(  # scoring only computes: a cancel need not wait for the model
        lambda: score_measured(task, submission, measured, judging.config, battle_id=battle_id,
                               emit=quiet_once_cancelled),
        cancel, name="logomesh-scoring")
    return ScoredSubmission(measured, card)
