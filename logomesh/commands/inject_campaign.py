"""``logomesh inject campaign``: the injection search against every agent on every task and seed, and the agents
ranked by resistance (docs/injection.md, "Campaign")."""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Annotated

import typer

from logomesh.commands.common import (
    EXIT_USAGE,
    HomeOption,
    JsonOption,
    SandboxOption,
    TasksDirOption,
    fail,
)
from logomesh.commands.inject import (
    NoUtilityOption,
    ObjectiveOption,
    PurpleTimeoutOption,
    SearchOption,
    check_objectives,
    check_reachable,
    check_search,
)
from logomesh.plural import counted

if TYPE_CHECKING:
    from logomesh.inject.campaign import CampaignAgent, CampaignRun

EXIT_INTERRUPTED = 130
KIND_EXAMPLE = "--purple-kind obeying=inject-obeying:1"


def _kind_agent(spec: str) -> tuple[str, str, int]:
    """``NAME=KIND[:SEED]`` as (name, kind, seed), or the usage error naming the form."""
    from logomesh.purple.kinds import KindRefused, ServeOptions, purple_kind

    name, sep, rest = spec.partition("=")
    kind, colon, seed_text = rest.strip().partition(":")
    if not sep or not kind:
        fail(f"--purple-kind {spec!r}: write NAME=KIND or NAME=KIND:SEED, e.g. {KIND_EXAMPLE}", EXIT_USAGE)
    try:
        seed = int(seed_text) if colon else 0
    except ValueError:
        fail(f"--purple-kind {spec!r}: the kind's seed after ':' must be a whole number, e.g. {KIND_EXAMPLE}",
             EXIT_USAGE)
    try:
        purple_kind(kind)(ServeOptions(seed=seed))
    except KindRefused as exc:
        fail(f"--purple-kind {spec!r}: {exc}", EXIT_USAGE)
    return name.strip(), kind, seed


def check_agents(purple: Sequence[str], kinds: Sequence[str]) -> tuple[CampaignAgent, ...]:
    """``--purple NAME=URL`` and ``--purple-kind NAME=KIND[:SEED]`` as agents with unique names, in the order
    given (URLs first), or the one-line usage error (exit 2)."""
    from logomesh.campaign.plan import PlanError, check_agent_names, parse_agents
    from logomesh.inject.campaign import CampaignAgent
    from logomesh.inject.run import Target

    if not purple and not kinds:
        fail("name at least one agent: --purple NAME=URL or --purple-kind NAME=KIND[:SEED] (repeatable)",
             EXIT_USAGE)
    served = [_kind_agent(spec) for spec in kinds]
    try:
        by_url = parse_agents(purple, []) if purple else ()
        check_agent_names([a.name for a in by_url] + [name for name, _, _ in served])
    except PlanError as exc:
        fail(str(exc), EXIT_USAGE)
    return (*(CampaignAgent(a.name, Target(url=a.url)) for a in by_url),
            *(CampaignAgent(name, Target(kind=kind, kind_seed=seed)) for name, kind, seed in served))


def check_tasks(tasks: str) -> tuple[str, ...]:
    """``all`` or task ids separated by commas, each known to the library, or the usage error."""
    from logomesh.campaign.plan import PlanError, resolve_tasks

    try:
        return resolve_tasks(tasks)
    except PlanError as exc:
        fail(str(exc), EXIT_USAGE)


def check_seeds(seed: int, seeds: int) -> None:
    from logomesh.battle.request import SEED_LIMIT
    from logomesh.inject.campaign import MAX_SEEDS

    if not 1 <= seeds <= MAX_SEEDS:
        fail(f"--seeds must be a whole number of seeds from 1 to {MAX_SEEDS}, not {seeds}", EXIT_USAGE)
    if not 0 <= seed <= SEED_LIMIT - seeds:
        fail(f"--seed must be a whole number from 0 to {SEED_LIMIT - seeds}, not {seed}", EXIT_USAGE)


def _progress(total: int) -> Callable[[int, CampaignRun], None]:
    def show(number: int, run: CampaignRun) -> None:
        outcome = run.outcome
        reached = sum(o.reached for o in outcome.objectives)
        print(f"run {number}/{total}: {run.agent} on {outcome.request.task_id}, seed {outcome.request.seed}: "
              f"{reached}/{len(outcome.objectives)} objectives reached in {outcome.queries} queries "
              f"({outcome.run_id})", file=sys.stderr, flush=True)

    return show


def campaign(
    purple: Annotated[list[str] | None, typer.Option(
        "--purple", help="NAME=URL of an A2A purple agent (repeatable).")] = None,
    purple_kind: Annotated[list[str] | None, typer.Option(
        "--purple-kind", help="NAME=KIND[:SEED]: a registered kind served on loopback for each run, e.g. "
                              "obeying=inject-obeying:1 (repeatable).")] = None,
    tasks: Annotated[str, typer.Option("--tasks", help="'all' or task ids separated by commas.")] = "all",
    objective: ObjectiveOption = None,
    budget: Annotated[int, typer.Option("--budget", help="Queries to the agent in each run, at most.")] = 40,
    seed: Annotated[int, typer.Option("--seed", help="The first run seed: runs use SEED, SEED+1, ...")] = 0,
    seeds: Annotated[int, typer.Option("--seeds", help="Runs per agent and task, each with its own seed.")] = 1,
    search: SearchOption = "mcts",
    sandbox: SandboxOption = "auto",
    purple_timeout: PurpleTimeoutOption = 120.0,
    no_utility: NoUtilityOption = False,
    tasks_dir: TasksDirOption = None,
    home: HomeOption = None,
    as_json: JsonOption = False,
) -> None:
    """Search injections against every agent on every task and seed; rank the agents by attack success rate."""
    from ledger import LedgerError
    from logomesh.home import writable_home
    from logomesh.inject.campaign import InjectCampaign, run_campaign
    from logomesh.inject.ranking import rank_agents
    from logomesh.inject.ranking_report import dumps, ranking_text
    from logomesh.sandbox.base import SandboxBroken, SandboxUnavailable

    agents = check_agents(purple or [], purple_kind or [])
    task_ids = check_tasks(tasks)
    objectives = check_objectives(objective)
    check_search(budget, search, purple_timeout)
    check_seeds(seed, seeds)
    state = writable_home(home)
    check_reachable([a.target for a in agents], sandbox, "the campaign")
    plan = InjectCampaign(agents, task_ids, objectives, budget, seed, seeds, search, sandbox, state, purple_timeout,
                          not no_utility)
    print(f"injection campaign: {counted(plan.runs, 'run')} ({counted(len(agents), 'agent')} x "
          f"{counted(len(task_ids), 'task')} x {counted(seeds, 'seed')}), each recorded under {state}",
          file=sys.stderr)
    try:
        runs = run_campaign(plan, _progress(plan.runs))
    except KeyboardInterrupt:
        print("logomesh: interrupted: the runs recorded so far are kept in the ledger", file=sys.stderr)
        raise typer.Exit(EXIT_INTERRUPTED) from None
    except (SandboxUnavailable, SandboxBroken, LedgerError) as exc:
        fail(f"the campaign stopped (the runs finished before are recorded): {exc}")
    ranking = rank_agents(plan, runs)
    print(dumps(ranking) if as_json else ranking_text(ranking))
