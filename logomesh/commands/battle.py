"""``logomesh battle run``."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Annotated

import typer

from logomesh.commands.common import (
    EXIT_ERROR,
    EXIT_USAGE,
    RED_BUDGET_HELP,
    HomeOption,
    JsonOption,
    SandboxOption,
    TasksDirOption,
    check_battle_id,
    check_seconds,
    fail,
)
from logomesh.commands.scoring import (
    LlmMaxTokensOption,
    LlmModelOption,
    LlmTimeoutOption,
    LlmUrlOption,
    review_llm,
)
from logomesh.purple import DEFAULT_PURPLE_TIMEOUT_S

if TYPE_CHECKING:
    from logomesh.battle.spine import BattleOutcome

app = typer.Typer(help="Run one battle.", no_args_is_help=True)

EXIT_CANCELLED = 130  # the shell's code for a command stopped by Ctrl-C (128 + SIGINT)

def check_agent(task_id: str, purple: str | None, mock: str | None, stream: bool) -> None:
    """Refuse, as a usage error, a battle that cannot start: before anything touches the ledger."""
    from logomesh.purple.agent_url import agent_url_problem
    from logomesh.tasks import TaskError, load_task

    if (purple is None) == (mock is None):
        fail("name exactly one purple agent: --purple URL or --mock VARIANT", EXIT_USAGE)
    if purple is not None and (problem := agent_url_problem(purple)):
        fail(f"--purple {problem}", EXIT_USAGE)
    if stream and purple is None:
        fail("--stream goes with --purple URL (the mock answers in-process)", EXIT_USAGE)
    try:
        task = load_task(task_id)
        if mock is not None:
            task.labelled_submission(mock)
    except TaskError as exc:
        fail(str(exc), EXIT_USAGE)


@app.command("run")
def run(
    task: Annotated[str, typer.Option("--task", help="Task id (see 'logomesh tasks list').")],
    purple: Annotated[str | None, typer.Option("--purple", help="URL of an A2A purple agent.")] = None,
    mock: Annotated[str | None, typer.Option("--mock", help="Serve the task's canned submission VARIANT.")] = None,
    battle_id: Annotated[
        str | None, typer.Option("--battle-id", help="Battle id (default: derived from task, purple and seed).")
    ] = None,
    seed: Annotated[int, typer.Option("--seed", help="Seed for every random choice.")] = 0,
    sandbox: SandboxOption = "auto",
    red_budget: Annotated[float, typer.Option("--red-budget", help=RED_BUDGET_HELP)] = 10.0,
    no_red: Annotated[bool, typer.Option("--no-red", help="Skip the red agent.")] = False,
    protocol: Annotated[str | None, typer.Option("--protocol", help="A2A protocol: 0.3 or 1.0.")] = None,
    purple_timeout: Annotated[
        float, typer.Option("--purple-timeout", help="Seconds the purple agent may take.")
    ] = DEFAULT_PURPLE_TIMEOUT_S,
    stream: Annotated[
        bool, typer.Option("--stream", help="Ask the purple agent with message/stream (SSE) instead of message/send.")
    ] = False,
    llm_base_url: LlmUrlOption = None,
    llm_model: LlmModelOption = None,
    llm_timeout: LlmTimeoutOption = 30.0,
    llm_max_tokens: LlmMaxTokensOption = None,
    tasks_dir: TasksDirOption = None,
    home: HomeOption = None,
    as_json: JsonOption = False,
) -> None:
    """Send a task to a purple agent, sandbox, attack, score and record the answer."""
    from ledger import LedgerError
    from logomesh.battle.preflight import EnvironmentProblem
    from logomesh.battle.request import BattleRequest, BattleSetupError, default_battle_id, free_battle_id
    from logomesh.battle.spine import run_battle
    from logomesh.cancel import CancelToken, cancel_on_sigint
    from logomesh.events import fan_out
    from logomesh.home import writable_home
    from logomesh.progress import ProgressPrinter
    from logomesh.stage_clock import StageClock, process_age_s

    check_seconds("--red-budget", red_budget)
    if protocol not in (None, "0.3", "1.0"):
        fail(f"--protocol must be 0.3 or 1.0, not {protocol!r}", 2)
    check_seconds("--purple-timeout", purple_timeout)
    check_battle_id(battle_id)
    check_agent(task, purple, mock, stream)
    review = review_llm(llm_base_url, llm_model, llm_timeout, llm_max_tokens)
    label = purple or f"mock:{mock}"
    state = writable_home(home)  # created by the first record: a refused battle leaves nothing behind
    try:
        chosen_id = battle_id or free_battle_id(state, default_battle_id(task, label, seed))
    except LedgerError as exc:
        fail(str(exc))
    request = BattleRequest(
        task_id=task,
        battle_id=chosen_id,
        seed=seed,
        home=state,
        purple_url=purple,
        mock_variant=mock,
        protocol=protocol,
        sandbox=sandbox,
        red_budget_s=red_budget,
        red=not no_red,
        purple_timeout_s=purple_timeout,
        purple_stream=stream,
        review_llm=review,
        cancel=CancelToken(),
    )
    try:
        with cancel_on_sigint(request.cancel):  # Ctrl-C stops the battle, which is recorded as cancelled
            clock = StageClock(start_up=process_age_s())
            outcome = run_battle(request, fan_out(clock, ProgressPrinter()))
    except EnvironmentProblem as exc:  # no sandbox works, the agent does not answer: nothing recorded
        fail(f"the battle cannot start: {exc}")
    except BattleSetupError as exc:  # what check_agent cannot see, e.g. a battle id already recorded
        fail(str(exc), EXIT_USAGE)
    except LedgerError as exc:
        fail(str(exc))
    _report(outcome, clock.stop(), as_json)


def _report(outcome: BattleOutcome, stages: dict[str, float], as_json: bool) -> None:
    """The battle's result on stdout (its figures, or its JSON with the stage timings beside it, outside the
    signed bytes); a cancelled or failed battle's one line on stderr and its exit code."""
    from logomesh.battle.spine import result_json
    from logomesh.stage_clock import describe_stages

    result = outcome.result
    if as_json:
        print(result_json({**result.to_json(), "stage_seconds": {k: round(v, 3) for k, v in stages.items()}}))
    else:
        figures = "  ".join(f"{letter} {value:.3f}" if value is not None else f"{letter} —"
                            for letter, _, value in result.scores.components.named())
        print(f"CIS {result.cis_score:.3f}  ({figures})  status {result.status}")
        if result.finish is not None:
            print(f"purple answer: {result.finish.note}")
        print(f"recorded: entry #{outcome.sequence} in {outcome.db_path}")
        print(describe_stages(stages))
    if outcome.cancelled:
        print(f"logomesh: battle cancelled at stage {result.ending.stage or '?'}; recorded as cancelled",
              file=sys.stderr)
        raise typer.Exit(EXIT_CANCELLED)
    if outcome.failed:
        print(f"logomesh: error: battle failed: {result.ending.reason or 'unknown reason'}", file=sys.stderr)
        raise typer.Exit(EXIT_ERROR)
