"""An injection campaign: the injection search run for every agent over every task and seed, one run at a time.

Each run is ``run.py::run_injection``, unchanged: it records its queries and its outcome in the ledger as
``logomesh inject run`` does, so the campaign writes no record of its own and every figure of its ranking
(``ranking.py``) traces to signed run entries by their run ids. The run seeds are ``seed``, ``seed + 1``, …:
every agent meets the same secrets and the same search order on a task for a given seed, so agents are
compared on the same attacks, and each run can be repeated alone with ``logomesh inject run --seed``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from logomesh.inject.objectives import ObjectiveName
from logomesh.inject.run import InjectOutcome, InjectRequest, Target, run_injection

MAX_SEEDS = 1000
"""Seeds per agent and task, at most: a typo (a port pasted into ``--seeds``) must not start days of runs."""


@dataclass(frozen=True)
class CampaignAgent:
    """An agent of the campaign under the name the ranking shows, and how it is reached."""

    name: str
    target: Target


@dataclass(frozen=True)
class InjectCampaign:
    """Everything that shapes the campaign's runs; the outcome is a function of it and the agents' answers."""

    agents: tuple[CampaignAgent, ...]
    task_ids: tuple[str, ...]
    objectives: tuple[ObjectiveName, ...]
    budget: int
    seed: int
    seeds: int
    search: str = "mcts"
    sandbox: str = "auto"
    home: Path | None = None  # None: nothing recorded
    purple_timeout_s: float = 120.0
    utility: bool = True

    @property
    def run_seeds(self) -> tuple[int, ...]:
        return tuple(range(self.seed, self.seed + self.seeds))

    @property
    def runs(self) -> int:
        return len(self.agents) * len(self.task_ids) * self.seeds


@dataclass(frozen=True)
class CampaignRun:
    """One run of the campaign: which agent, and what ``run_injection`` returned."""

    agent: str
    outcome: InjectOutcome


OnRun = Callable[[int, CampaignRun], None]
"""Told of each run once it is recorded, with its 1-based number (the command prints progress)."""


def campaign_requests(campaign: InjectCampaign) -> Iterator[tuple[CampaignAgent, InjectRequest]]:
    """The runs in their order: task, then seed, then agent (the campaign's order of agents)."""
    for task_id in campaign.task_ids:
        for seed in campaign.run_seeds:
            for agent in campaign.agents:
                yield agent, InjectRequest(task_id, agent.target, campaign.objectives, campaign.budget, seed,
                                           campaign.search, campaign.sandbox, campaign.home,
                                           campaign.purple_timeout_s, campaign.utility)


def run_campaign(campaign: InjectCampaign, on_run: OnRun | None = None) -> tuple[CampaignRun, ...]:
    """Every run, one after another. Raises what ``run_injection`` raises (``SandboxUnavailable``,
    ``LedgerError``); the runs finished before are recorded and stay."""
    runs: list[CampaignRun] = []
    for number, (agent, request) in enumerate(campaign_requests(campaign), start=1):
        run = CampaignRun(agent.name, run_injection(request))
        runs.append(run)
        if on_run is not None:
            on_run(number, run)
    return tuple(runs)
