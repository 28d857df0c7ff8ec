"""Measure, then score: the one pipeline by which a battle, a replay, ``logomesh score`` and ``calibrate`` judge.

``measure_and_score`` opens the sandbox it is given, measures the submission
there (``measure.py``: hidden suite, purple tests, flawed variants, red
agent), closes it, and scores what was measured (``cis.score_submission``,
the one place a ``Measured`` is taken apart for scoring). Whoever calls it
gets the same card for the same submission, settings and seed.

The battle's context (``BattleContext``: id, event sink, cancel token, seed)
is the one argument that says which battle this is. Scoring runs on a thread
of its own that a cancel abandons (it only computes), and its events stop once
the context's token is cancelled.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import TYPE_CHECKING

from logomesh.cancel import abandon_on_cancel
from logomesh.events import Event, StageStarted
from logomesh.scoring.cis import ScoreCard, score_submission
from logomesh.scoring.judging import Judging
from logomesh.scoring.measure import Measured, measure

if TYPE_CHECKING:
    from logomesh.context import BattleContext
    from logomesh.sandbox import Sandbox
    from logomesh.submission import Submission
    from logomesh.tasks import TaskSpec


__all__ = ["Judging", "ScoredSubmission", "measure_and_score"]


@dataclass(frozen=True)
class ScoredSubmission:
    """What the pipeline returns: what it measured and the score card made from it."""

    measured: Measured
    card: ScoreCard


def measure_and_score(
    task: TaskSpec,
    submission: Submission,
    sandbox: AbstractContextManager[Sandbox],
    judging: Judging,
    battle: BattleContext,
    on_measured: Callable[[Measured], None] | None = None,
) -> ScoredSubmission:
    """Measure ``submission`` in the box ``sandbox`` opens, close it, then score.

    ``on_measured`` sees the measurements as soon as they are made, before the box closes (a battle records
    them then, so one cancelled while scoring still holds them). Events go to ``battle.emit``; the scoring
    stage starts with ``StageStarted("scoring")``.
    """
    cancel, emit = battle.cancel, battle.emit
    with sandbox as box:
        measured = measure(task, submission, box, judging, battle)
        if on_measured is not None:
            on_measured(measured)
    cancel.check()
    emit(StageStarted(battle.battle_id, "scoring"))

    def quiet_once_cancelled(event: Event) -> None:
        if not cancel.cancelled:
            emit(event)

    card = abandon_on_cancel(  # scoring only computes: a cancel need not wait for the model
        lambda: score_submission(task, submission, measured, judging.config, battle_id=battle.battle_id,
                                 emit=quiet_once_cancelled),
        cancel, name="logomesh-scoring")
    return ScoredSubmission(measured, card)
