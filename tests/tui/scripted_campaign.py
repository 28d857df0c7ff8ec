"""A deterministic campaign executor for console tests: the ``Executor`` protocol without processes.

It keeps ``workers`` jobs in flight as the local executor does (``JobStarted``
for each, then the oldest finishes and the next starts), and answers each job
with a synthetic ``PlayedBattle`` whose CIS the test's ``score`` function
chooses, so the leaderboard it implies is known. ``run_campaign`` records every
result in the real ledger under the test's home.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable, Collection, Generator, Sequence
from dataclasses import replace
from pathlib import Path

from logomesh.battle.record import PlayedBattle, failed_played
from logomesh.battle.result import ResultEnding
from logomesh.battle.scores import Scores
from logomesh.campaign.executor import ExecutorEvent, JobFinished, JobLost, JobStarted
from logomesh.campaign.plan import BattleJob, CampaignPlan, Settings
from logomesh.campaign.work import JobDone, request_for

AGENT_FAILURE = "purple"  # a battle failed at this stage counts as CIS 0 for its agent
INFRA_FAILURE = "sandbox"  # failed at any other stage: excluded from the agent's mean


def nothing_to_check(plan: CampaignPlan) -> None:
    """The console's pre-flight for a scripted executor: it opens no sandbox and its agents are never called."""


class Failed:
    """A scripted failure at ``stage``: what ``score`` returns for a battle that fails."""

    def __init__(self, stage: str) -> None:
        self.stage = stage


Score = Callable[[BattleJob], float | Failed]
Findings = Callable[[BattleJob], list[dict[str, object]]]  # the vulnerabilities a scored battle records


def no_findings(job: BattleJob) -> list[dict[str, object]]:
    return []


def played(job: BattleJob, settings: Settings, home: Path, outcome: float | Failed,
           vulnerabilities: Sequence[dict[str, object]] = ()) -> PlayedBattle:
    """A complete result in the engine's shape, scored with ``outcome`` or failed at its stage."""
    request = request_for(job, settings, home)
    if isinstance(outcome, Failed):
        return failed_played(request, outcome.stage, f"scripted failure at {outcome.stage}")
    base = failed_played(request, "none", "")
    scores = {**base.result.scores.to_json(), "cis_score": outcome}
    if vulnerabilities:
        scores["red_analysis"] = {"attack_successful": True, "vulnerability_count": len(vulnerabilities),
                                  "max_severity": "high", "vulnerabilities": list(vulnerabilities)}
    result = replace(base.result, ending=ResultEnding("scored"), scores=Scores.from_json(scores))
    return PlayedBattle(result, {}, base.attributes, None)


class ScriptedExecutor:
    """``factory`` is the console's executor factory; it records what the console asked for."""

    name = "scripted"

    def __init__(self, score: Score, lose: Collection[tuple[str, str, int]] = (),
                 hold_after: int | None = None, findings: Findings = no_findings) -> None:
        self.score = score
        self.findings = findings
        self.lose = set(lose)  # (agent, task, repeat) whose first attempt loses its worker
        self.hold_after = hold_after  # after this many JobFinished, wait for ``release``
        self.release = threading.Event()
        self.interrupted = threading.Event()
        self.workers = 0
        self.settings = Settings()
        self.home = Path()
        self.runs: list[list[str]] = []  # the battle ids of every run(jobs) call
        self.events: list[ExecutorEvent] = []
        self.finished: list[str] = []
        self.closed = threading.Event()

    def factory(self, workers: int, settings: Settings, home: Path) -> ScriptedExecutor:
        self.workers, self.settings, self.home = workers, settings, home
        self.closed.clear()
        self.interrupted.clear()
        return self

    def run(self, jobs: Sequence[BattleJob]) -> Generator[ExecutorEvent, None, None]:
        self.runs.append([job.battle_id for job in jobs])
        queue = deque(jobs)
        flying: deque[BattleJob] = deque()
        try:
            while (queue or flying) and not self.interrupted.is_set():
                while queue and len(flying) < self.workers:
                    flying.append(queue.popleft())
                    yield self._event(JobStarted(flying[-1]))
                job = flying.popleft()
                if job.attempt == 1 and (job.agent.name, job.task_id, job.repeat) in self.lose:
                    yield self._event(JobLost(job, "scripted: worker died"))
                    queue.appendleft(replace(job, attempt=2))
                    continue
                if self.hold_after is not None and len(self.finished) == self.hold_after:
                    deadline = time.monotonic() + 120  # held until released or interrupted: a hang guard
                    while not (self.release.is_set() or self.interrupted.wait(0.01)) and time.monotonic() < deadline:
                        pass
                    if self.interrupted.is_set():
                        return
                done = JobDone(job, played(job, self.settings, self.home, self.score(job), self.findings(job)))
                self.finished.append(job.battle_id)
                yield self._event(JobFinished(done))
        finally:
            self.closed.set()

    def interrupt(self) -> None:
        self.interrupted.set()

    def _event(self, event: ExecutorEvent) -> ExecutorEvent:
        self.events.append(event)
        return event
