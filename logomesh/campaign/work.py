"""What a campaign worker does with one job: play the battle, time its stages, record nothing.

Workers (local processes or Ray tasks) return a ``JobDone``; only the campaign
driver writes to the ledger. ``play_job`` never raises for a battle that went
wrong: that is a failed result with its reason, as in ``run_battle``.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from logomesh.battle.record import PlayedBattle, failed_played
from logomesh.battle.request import BattleRequest
from logomesh.battle.spine import play_battle
from logomesh.campaign.plan import BattleJob, Settings
from logomesh.stage_clock import StageClock
from logomesh.tasks import TaskSpec, load_task


@dataclass(frozen=True)
class JobDone:
    job: BattleJob
    played: PlayedBattle
    stage_seconds: dict[str, float] = field(default_factory=dict)


PlayFn = Callable[[BattleJob, Settings, Path], JobDone]


def request_for(job: BattleJob, settings: Settings, home: Path) -> BattleRequest:
    return BattleRequest(
        task_id=job.task_id,
        battle_id=job.battle_id,
        seed=job.seed,
        home=home,
        purple_url=job.agent.url,
        mock_variant=job.agent.mock_variant,
        protocol=settings.protocol,
        sandbox=settings.sandbox,
        red_budget_s=settings.red_budget_s,
        red=settings.red,
        campaign_id=job.campaign_id,
        purple_timeout_s=settings.purple_timeout_s,
        review_llm=settings.review_llm,
    )


@functools.lru_cache(maxsize=64)
def _task(task_id: str) -> TaskSpec:
    return load_task(task_id)


def play_job(job: BattleJob, settings: Settings, home: Path) -> JobDone:
    """Play one campaign battle in this process (a worker), without touching the ledger."""
    request = request_for(job, settings, home)
    stages = StageClock()
    try:
        task = _task(job.task_id)
    except Exception as exc:  # the driver checked the tasks; a worker that cannot load one says why
        reason = f"task {job.task_id!r} could not be loaded on this worker: {exc}".splitlines()[0]
        return JobDone(job, failed_played(request, "engine", reason))
    played = play_battle(request, task, stages)
    return JobDone(job, played, stages.stop())
