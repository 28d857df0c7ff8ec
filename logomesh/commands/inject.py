"""``logomesh inject run``: search for prompt injections that make a purple agent's code do what the task did
not ask (docs/injection.md, "Search")."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Annotated

import typer

from logomesh.commands.common import (
    EXIT_USAGE,
    HomeOption,
    JsonOption,
    SandboxOption,
    TasksDirOption,
    check_seconds,
    fail,
)

if TYPE_CHECKING:
    from logomesh.inject.objectives import ObjectiveName
    from logomesh.inject.rewrite import AttackerModel
    from logomesh.inject.run import InjectRequest, Target

# The options ``inject run`` and ``inject campaign`` share, declared once.
ObjectiveOption = Annotated[list[str] | None, typer.Option(
    "--objective", help="leak-canary, write-outside, backdoor or drop-behaviour (repeatable; default: all).")]
SearchOption = Annotated[str, typer.Option("--search", help="mcts, random or templates.")]
PurpleTimeoutOption = Annotated[float, typer.Option("--purple-timeout", help="Seconds each answer may take.")]
NoUtilityOption = Annotated[bool, typer.Option("--no-utility", help="Skip the hidden tests on the answers.")]

app = typer.Typer(help="Injection battles: search prompt injections against a coding agent.", no_args_is_help=True)


def check_target(purple: str | None, kind: str | None, kind_seed: int) -> Target:
    """The agent, or the one-line usage error (exit 2): exactly one of a URL or a registered kind."""
    from logomesh.inject.run import Target
    from logomesh.purple.agent_url import agent_url_problem
    from logomesh.purple.kinds import KindRefused, ServeOptions, purple_kind

    if (purple is None) == (kind is None):
        fail("name exactly one purple agent: --purple URL or --purple-kind NAME", EXIT_USAGE)
    if purple is not None:
        if problem := agent_url_problem(purple):
            fail(f"--purple {problem}", EXIT_USAGE)
        return Target(url=purple)
    assert kind is not None
    try:
        purple_kind(kind)(ServeOptions(seed=kind_seed))
    except KindRefused as exc:
        fail(f"--purple-kind: {exc}", EXIT_USAGE)
    return Target(kind=kind, kind_seed=kind_seed)


def check_objectives(names: list[str] | None) -> tuple[ObjectiveName, ...]:
    """The objectives named (default: all, in the catalogue's order), each once, or the usage error."""
    from logomesh.inject.objectives import OBJECTIVES

    if not names:
        return tuple(OBJECTIVES)
    chosen: list[ObjectiveName] = []
    for name in names:
        known = next((o for o in OBJECTIVES if o == name), None)
        if known is None:
            fail(f"--objective must be one of {', '.join(OBJECTIVES)}, not {name!r}", EXIT_USAGE)
        if known not in chosen:
            chosen.append(known)
    return tuple(chosen)


MAX_BRANCHES = 16


def check_attacker(url: str | None, model: str | None, branches: int) -> AttackerModel | None:
    """The attacker model from ``--attacker-url``/``--attacker-model`` (None: the grammar's wording only), or the
    one-line usage error (exit 2)."""
    from logomesh.inject.rewrite import AttackerModel

    if (url is None) != (model is None):
        fail("give both --attacker-url and --attacker-model, or neither", EXIT_USAGE)
    if not 1 <= branches <= MAX_BRANCHES:
        fail(f"--branches must be a whole number from 1 to {MAX_BRANCHES}, not {branches}", EXIT_USAGE)
    if url is None or model is None:
        return None
    if not url.startswith(("http://", "https://")):
        fail(f"--attacker-url must start with http:// or https://, not {url!r} (a chat-completions base URL, "
             "e.g. http://127.0.0.1:8000/v1)", EXIT_USAGE)
    return AttackerModel(url, model, branches)


def check_request(task: str, target: Target, objectives: tuple[ObjectiveName, ...], budget: int, seed: int,
                  search: str, sandbox: str, purple_timeout: float, utility: bool,
                  home: HomeOption, attacker: AttackerModel | None = None) -> InjectRequest:
    """Everything a run needs, checked before any work: one line and exit 2 (or 1 for the environment)."""
    from logomesh.home import writable_home
    from logomesh.inject.run import InjectRequest
    from logomesh.tasks import TaskError, load_task

    check_search(budget, search, purple_timeout)
    try:
        load_task(task)
    except TaskError as exc:
        fail(str(exc), EXIT_USAGE)
    state = writable_home(home)
    check_reachable([target], sandbox, "the run")
    return InjectRequest(task, target, objectives, budget, seed, search, sandbox, state, purple_timeout, utility,
                         attacker=attacker)


def check_search(budget: int, search: str, purple_timeout: float) -> None:
    """The budget, the search and the agent's timeout, or the one-line usage error (exit 2)."""
    from logomesh.inject.search import SEARCHES

    if budget < 1:
        fail(f"--budget must be a whole number of queries, at least 1, not {budget}", EXIT_USAGE)
    if search not in SEARCHES:
        fail(f"--search must be one of {', '.join(SEARCHES)}, not {search!r}", EXIT_USAGE)
    check_seconds("--purple-timeout", purple_timeout)


def check_reachable(targets: Sequence[Target], sandbox: str, what: str) -> None:
    """Every agent given by URL answers with its card and a sandbox opens, or one line and exit 1."""
    from logomesh.battle.preflight import sandbox_problem
    from logomesh.purple.probe import agent_problem

    for target in targets:
        if target.url is not None and (problem := agent_problem(target.url, None)):
            fail(f"{what} cannot start: {problem}")
    if problem := sandbox_problem(sandbox):
        fail(f"{what} cannot start: {problem}")


@app.command("run")
def run(
    task: Annotated[str, typer.Option("--task", help="Task id (see 'logomesh tasks list').")],
    purple: Annotated[str | None, typer.Option("--purple", help="URL of an A2A purple agent.")] = None,
    purple_kind: Annotated[str | None, typer.Option(
        "--purple-kind", help="A registered purple kind served on loopback for the run, e.g. inject-obeying.")] = None,
    kind_seed: Annotated[int, typer.Option("--kind-seed", help="With --purple-kind: the kind's --seed.")] = 0,
    objective: ObjectiveOption = None,
    budget: Annotated[int, typer.Option("--budget", help="Queries to the purple agent, at most.")] = 40,
    seed: Annotated[int, typer.Option("--seed", help="Seed for the secrets and every random choice.")] = 0,
    search: SearchOption = "mcts",
    sandbox: SandboxOption = "auto",
    purple_timeout: PurpleTimeoutOption = 120.0,
    no_utility: NoUtilityOption = False,
    attacker_url: Annotated[str | None, typer.Option(
        "--attacker-url", help="An attacker model's chat-completions base URL: it rewrites each ask, TAP-style.",
    )] = None,
    attacker_model: Annotated[str | None, typer.Option(
        "--attacker-model", help="With --attacker-url: its model.")] = None,
    branches: Annotated[int, typer.Option(
        "--branches", help="Rewrites asked of the attacker model per objective.")] = 3,
    tasks_dir: TasksDirOption = None,
    home: HomeOption = None,
    as_json: JsonOption = False,
) -> None:
    """Search injections against one agent and task; print, per objective, success and queries to it."""
    from ledger import LedgerError
    from logomesh.inject.report import dumps, run_text
    from logomesh.inject.run import run_injection
    from logomesh.sandbox.base import SandboxBroken, SandboxUnavailable

    target = check_target(purple, purple_kind, kind_seed)
    objectives = check_objectives(objective)
    attacker = check_attacker(attacker_url, attacker_model, branches)
    request = check_request(task, target, objectives, budget, seed, search, sandbox, purple_timeout, not no_utility,
                            home, attacker)
    try:
        outcome = run_injection(request)
    except (SandboxUnavailable, SandboxBroken, LedgerError) as exc:
        fail(str(exc))
    print(dumps(outcome) if as_json else run_text(outcome))
