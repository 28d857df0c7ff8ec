"""The campaign driver: plans, dispatches through an executor, and is the one ledger writer.

Every battle of a campaign is tagged with the campaign id in its signed
attributes. A battle is *acknowledged* once its ledger append returned; the
driver appends each result before it asks the executor for more work. An
interrupted campaign (Ctrl-C, a killed driver) keeps every acknowledged battle,
and ``--resume`` runs exactly the battles the ledger does not hold.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from ledger import Ledger
from logomesh.battle.spine import record_battle
from logomesh.campaign.executor import Executor, JobFinished, JobLost, JobStarted
from logomesh.campaign.model import RecordedBattle
from logomesh.campaign.plan import BattleJob, CampaignPlan
from logomesh.campaign.reading import input_digests, parse_result
from logomesh.campaign.work import JobDone


@dataclass
class CampaignProgress:
    """What the progress display shows; the driver updates it after every executor event."""

    campaign_id: str
    total: int
    already: int
    done: int = 0
    failed: int = 0
    running: int = 0
    retried: int = 0
    started_at: float = field(default_factory=time.monotonic)
    stage_seconds: dict[str, float] = field(default_factory=dict)
    last: str = ""

    @property
    def recorded(self) -> int:
        return self.already + self.done

    @property
    def remaining(self) -> int:
        return self.total - self.recorded

    def rate_per_minute(self, now: float | None = None) -> float:
        elapsed = (now if now is not None else time.monotonic()) - self.started_at
        return 60.0 * self.done / elapsed if elapsed > 0 and self.done else 0.0

    def eta_seconds(self, now: float | None = None) -> float | None:
        rate = self.rate_per_minute(now)
        return 60.0 * self.remaining / rate if rate > 0 else None


Observer = Callable[[CampaignProgress, JobDone | None], None]
"""Called after every executor event with the progress, and with the battle just recorded, if any."""


def _ignore(progress: CampaignProgress, recorded: JobDone | None) -> None:
    return None


def recorded_battle_ids(home: Path, battle_ids: Iterable[str]) -> set[str]:
    """Which of ``battle_ids`` the ledger holds."""
    with Ledger.open(home) as led:
        return led.recorded(battle_ids)


def pending_jobs(plan: CampaignPlan, home: Path) -> tuple[list[BattleJob], int]:
    """The plan's battles the ledger does not hold yet, and how many it does."""
    jobs = plan.jobs()
    recorded = recorded_battle_ids(home, (job.battle_id for job in jobs))
    pending = [job for job in jobs if job.battle_id not in recorded]
    return pending, len(jobs) - len(pending)


def run_campaign(plan: CampaignPlan, home: Path, executor: Executor, observe: Observer = _ignore) -> CampaignProgress:
    """Run the plan's missing battles; returns the final progress. KeyboardInterrupt propagates after cleanup."""
    pending, already = pending_jobs(plan, home)
    progress = CampaignProgress(plan.campaign_id, total=already + len(pending), already=already)
    observe(progress, None)
    if not pending:
        return progress
    events = executor.run(pending)
    try:
        with Ledger.open(home) as led:
            for event in events:
                recorded = None
                if isinstance(event, JobStarted):
                    progress.running += 1
                    progress.last = f"started {event.job.battle_id}"
                elif isinstance(event, JobLost):
                    progress.running -= 1
                    progress.retried += 1
                    progress.last = f"retrying {event.job.battle_id}: {event.reason}"
                elif isinstance(event, JobFinished):
                    _record(home, led, event, progress)
                    recorded = event.done
                observe(progress, recorded)
    finally:
        events.close()  # stops the workers whatever happened, Ctrl-C included
    return progress


def _record(home: Path, led: Ledger, event: JobFinished, progress: CampaignProgress) -> None:
    done = event.done
    played = done.played
    if done.job.attempt > 1:
        played.attributes["attempts"] = str(done.job.attempt)
    started = time.perf_counter()
    record_battle(home, done.job.battle_id, played, ledger=led)
    stages = dict(done.stage_seconds)
    stages["ledger"] = stages.get("ledger", 0.0) + time.perf_counter() - started
    for stage, seconds in stages.items():
        progress.stage_seconds[stage] = progress.stage_seconds.get(stage, 0.0) + seconds
    progress.running = max(0, progress.running - 1)
    progress.done += 1
    if played.failed:
        progress.failed += 1
    progress.last = f"{done.job.battle_id}: {played.result.status} CIS {played.result.cis_score:.3f}"


def campaign_battles(home: Path, campaign_id: str) -> list[RecordedBattle]:
    """Every recorded battle of ``campaign_id``: its result, signed attributes and input digests, in ledger order."""
    rows: list[RecordedBattle] = []
    with Ledger.open(home) as led:
        for summary, document in led.documents_with("campaign_id", campaign_id):
            attributes = document.get("attributes")
            rows.append(RecordedBattle(
                summary.sequence, summary.battle_id, parse_result(document["result"], attributes),
                {str(k): str(v) for k, v in attributes.items()} if isinstance(attributes, dict) else {},
                input_digests(document.get("inputs"))))
    return rows
