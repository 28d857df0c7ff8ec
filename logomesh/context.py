"""``BattleContext``: what every stage of one battle shares, passed as one value instead of four parameters.

The spine builds it from the request (``BattleRequest.context``) and hands it down
``judge_submission → scoring.pipeline.measure_and_score → scoring.measure → red.attack → Mcts``.
Callers outside a battle (``logomesh red attack``, ``score``, ``calibrate``, benchmarks) build one with the seed
they mean; the seed has no default, so no stage picks one silently.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from logomesh.cancel import CancelToken
from logomesh.events import EventSink, discard


@dataclass(frozen=True, kw_only=True)
class BattleContext:
    seed: int
    """The seed of every random choice the battle makes (the red agent's search)."""
    battle_id: str = ""
    """The id every event names; ``""`` outside a battle."""
    emit: EventSink = discard
    """Where the stages' events go."""
    cancel: CancelToken = field(default_factory=CancelToken.never)
    """Cancelling it stops the battle at its next check; the default nobody can cancel."""
