"""``logomesh campaign run|report|list``: many battles and a leaderboard."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sys
from pathlib import Path
from types import FrameType
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
from logomesh.plural import counted
from logomesh.purple import DEFAULT_PURPLE_TIMEOUT_S

if TYPE_CHECKING:
    from logomesh.campaign.executor import Executor
    from logomesh.campaign.plan import Agent, CampaignPlan, Settings
    from logomesh.scoring.config import LlmConfig

app = typer.Typer(help="Run many battles in parallel and rank agents.", no_args_is_help=True)

EXIT_INTERRUPTED = 130
EXECUTORS = ("local", "ray")
FORMATS = ("table", "json", "html")


def _plan_from_options(home: Path, purple: list[str], mock: list[str], tasks: str, repeat: int, seed: int,
                       campaign_id: str | None, sandbox: str, red_budget: float, no_red: bool,
                       purple_timeout: float, protocol: str | None, executor: str, ray_address: str | None,
                       review: LlmConfig | None = None) -> CampaignPlan:
    from logomesh.campaign.plan import (
        PlanError,
        Settings,
        new_plan,
        parse_agents,
        plan_path,
        resolve_tasks,
        save_plan,
    )

    settings = Settings(sandbox=sandbox, red=not no_red, red_budget_s=red_budget if not no_red else 0.0,
                        purple_timeout_s=purple_timeout, protocol=protocol, review_llm=review)
    try:
        plan = new_plan(parse_agents(purple, mock), resolve_tasks(tasks), repeat, seed, settings, campaign_id)
    except PlanError as exc:  # agents, tasks, repeat, seed or id as given: a usage error
        fail(str(exc), EXIT_USAGE)
    _check_once(plan.agents, settings, executor, ray_address)
    if plan_path(home, plan.campaign_id).exists():
        fail(f"campaign {plan.campaign_id} already exists under {home}: add --resume {plan.campaign_id} to run "
             "what it is missing, or name a new one with --campaign-id")
    save_plan(home, plan)
    return plan


def worker_log(home: Path, campaign_id: str) -> Path:
    """Where local workers write what they print, so it never tears the progress bar."""
    return home / "logs" / f"campaign-{campaign_id}.log"


def _executor(kind: str, workers: int, plan: CampaignPlan, home: Path, ray_address: str | None) -> Executor:
    if kind == "ray":
        from logomesh.campaign.ray_executor import RayExecutor

        return RayExecutor(workers, plan.settings, home, address=ray_address)
    from logomesh.campaign.local import LocalExecutor

    return LocalExecutor(workers, plan.settings, home, log_file=worker_log(home, plan.campaign_id))


def _check_options(red_budget: float, purple_timeout: float, protocol: str | None, executor: str,
                   workers: int | None, ray_address: str | None) -> None:
    from logomesh.campaign.executor import MAX_WORKERS

    check_seconds("--red-budget", red_budget, " (or use --no-red)")
    check_seconds("--purple-timeout", purple_timeout)
    if protocol not in (None, "0.3", "1.0"):
        fail(f"--protocol must be 0.3 or 1.0, not {protocol!r}", 2)
    if executor not in EXECUTORS:
        fail(f"--executor must be local or ray, not {executor!r}", 2)
    if workers is not None and workers < 1:
        fail("--workers must be at least 1", 2)
    if workers is not None and workers > MAX_WORKERS:
        fail(f"--workers {workers} is more than the limit of {MAX_WORKERS} battles at once: give a number from 1 "
             f"to {MAX_WORKERS}, or leave --workers out to take what this machine allows", 2)
    if ray_address and executor != "ray":
        fail("--ray-address needs --executor ray", 2)


def _check_once(agents: tuple[Agent, ...], settings: Settings, executor: str, ray_address: str | None) -> None:
    """Before anything is written: Ray is there and its cluster answers (Ray executor), the sandbox works
    here (local workers) and every agent's card answers."""
    from logomesh.battle.preflight import EnvironmentProblem, check_environment
    from logomesh.campaign.ray_executor import RayUnavailable, check_ray

    urls = tuple(a.url for a in agents if a.url is not None)
    sandbox = settings.sandbox if executor == "local" else None  # Ray workers run their sandboxes elsewhere
    try:
        if executor == "ray":
            check_ray(ray_address)
        check_environment(sandbox, urls, settings.protocol, min(10.0, settings.purple_timeout_s))
    except (EnvironmentProblem, RayUnavailable) as exc:
        fail(f"the campaign cannot start (nothing was recorded): {exc}")


def _interrupt(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt


@app.command("run")
def run(
    purple: Annotated[
        list[str] | None, typer.Option("--purple", help="NAME=URL of an A2A purple agent (repeatable).")
    ] = None,
    mock: Annotated[
        list[str] | None, typer.Option("--mock", help="A canned mock VARIANT as an agent (repeatable).")
    ] = None,
    tasks: Annotated[str, typer.Option("--tasks", help="'all' or task ids separated by commas.")] = "all",
    repeat: Annotated[int, typer.Option("--repeat", help="Battles per agent and task.")] = 1,
    workers: Annotated[
        int | None, typer.Option("--workers", help="Battles at once (default: what cores and memory allow).")
    ] = None,
    executor: Annotated[str, typer.Option("--executor", help="local or ray.")] = "local",
    ray_address: Annotated[str | None, typer.Option("--ray-address", help="Join this Ray cluster.")] = None,
    seed: Annotated[int, typer.Option("--seed", help="Campaign seed; each battle's seed derives from it.")] = 0,
    campaign_id: Annotated[
        str | None, typer.Option("--campaign-id", help="Name the campaign (default: a hash of its plan).")
    ] = None,
    resume: Annotated[str | None, typer.Option("--resume", help="Run only what campaign ID is missing.")] = None,
    sandbox: SandboxOption = "auto",
    red_budget: Annotated[float, typer.Option("--red-budget", help=RED_BUDGET_HELP)] = 10.0,
    no_red: Annotated[bool, typer.Option("--no-red", help="Skip the red agent.")] = False,
    purple_timeout: Annotated[
        float, typer.Option("--purple-timeout", help="Seconds a purple agent may take.")
    ] = DEFAULT_PURPLE_TIMEOUT_S,
    protocol: Annotated[str | None, typer.Option("--protocol", help="A2A protocol: 0.3 or 1.0.")] = None,
    llm_base_url: LlmUrlOption = None,
    llm_model: LlmModelOption = None,
    llm_timeout: LlmTimeoutOption = 30.0,
    llm_max_tokens: LlmMaxTokensOption = None,
    tasks_dir: TasksDirOption = None,
    home: HomeOption = None,
    as_json: JsonOption = False,
) -> None:
    """Run every (agent, task, repeat) battle; every battle lands in the ledger tagged with the campaign id."""
    from ledger import LedgerError
    from logomesh.campaign.executor import default_workers
    from logomesh.campaign.plan import PlanError, load_plan, resume_library, save_workers, saved_workers
    from logomesh.campaign.ray_executor import RayUnavailable
    from logomesh.campaign.runner import run_campaign
    from logomesh.commands.campaign_progress import CampaignProgressBar
    from logomesh.home import writable_home

    _check_options(red_budget, purple_timeout, protocol, executor, workers, ray_address)
    review = review_llm(llm_base_url, llm_model, llm_timeout, llm_max_tokens)
    state = writable_home(home)  # created by the saved plan: a refused campaign leaves nothing behind
    previous = signal.signal(signal.SIGTERM, _interrupt)  # a terminated campaign stops as cleanly as Ctrl-C
    plan: CampaignPlan | None = None
    try:
        if resume is not None:
            if purple or mock or campaign_id:
                fail("--resume runs the plan saved with the campaign: drop --purple, --mock and --campaign-id", 2)
            plan = load_plan(state, resume)
            _check_once(plan.agents, plan.settings, executor, ray_address)
            try:
                library = resume_library(plan, os.environ.get("LOGOMESH_TASKS") or None)
            except PlanError as exc:
                fail(str(exc), EXIT_USAGE)
            if library is not None:  # the workers, local or Ray, read the library from the environment
                os.environ["LOGOMESH_TASKS"] = library
        else:
            plan = _plan_from_options(state, purple or [], mock or [], tasks, repeat, seed, campaign_id, sandbox,
                                      red_budget, no_red, purple_timeout, protocol, executor, ray_address, review)
        kept = saved_workers(state, plan.campaign_id) if resume is not None and workers is None else None
        chosen = workers or kept or default_workers()
        if resume is None:
            save_workers(state, plan.campaign_id, chosen)
        pool = _executor(executor, chosen, plan, state, ray_address)
        print(f"campaign {plan.campaign_id}: {counted(len(plan.agents), 'agent')} x "
              f"{counted(len(plan.task_ids), 'task')} x "
              f"{counted(plan.repeat, 'repeat')} on {counted(pool.workers, pool.name + ' worker')}"
              + (" (as the campaign started; --workers to change)" if kept else ""), file=sys.stderr)
        # stdout carries the summary alone: Ray's driver prints cluster events (a node lost) to stdout
        with CampaignProgressBar() as bar, contextlib.redirect_stdout(sys.stderr):
            progress = run_campaign(plan, state, pool, bar)
    except KeyboardInterrupt:
        rest = f"; run the rest with 'logomesh campaign run --resume {plan.campaign_id}'" if plan else ""
        print(f"logomesh: interrupted: the battles recorded so far are kept{rest}", file=sys.stderr)
        raise typer.Exit(EXIT_INTERRUPTED) from None
    except (PlanError, LedgerError, RayUnavailable) as exc:
        fail(str(exc))
    finally:
        signal.signal(signal.SIGTERM, previous)
    _print_summary(plan, state, as_json)
    if progress.recorded < progress.total:
        missing = progress.total - progress.recorded
        fail(f"{counted(missing, 'battle')} {'was' if missing == 1 else 'were'} not recorded: "
             f"'logomesh campaign run --resume {plan.campaign_id}'", EXIT_ERROR)
    if progress.done and progress.failed == progress.done:
        every = "the one battle" if progress.done == 1 else f"all {progress.done} battles"
        fail(f"{every} of this run failed (recorded, with their reasons above): "
             "check the agents' URLs and 'logomesh sandbox doctor'", EXIT_ERROR)


def _print_summary(plan: CampaignPlan, home: Path, as_json: bool) -> None:
    from logomesh.campaign.provenance import load_report
    from logomesh.campaign.report_json import report_json
    from logomesh.campaign.report_text import render_table

    report = load_report(home, plan)
    if as_json:
        print(json.dumps(report_json(report), indent=2, sort_keys=True))
    else:
        print(render_table(report))


@app.command("report")
def report(
    campaign_id: Annotated[str, typer.Argument(help="The campaign id printed by 'campaign run'.")],
    fmt: Annotated[str, typer.Option("--format", help="table, json or html.")] = "table",
    out: Annotated[Path | None, typer.Option("--out", help="Write the report to FILE instead of stdout.")] = None,
    home: HomeOption = None,
) -> None:
    """A leaderboard with intervals and paired comparisons, per-task and per-battle rows, findings, provenance."""
    from ledger import LedgerError
    from logomesh.campaign.html_report import render_html
    from logomesh.campaign.plan import PlanError, load_plan
    from logomesh.campaign.provenance import load_report
    from logomesh.campaign.report_json import report_json
    from logomesh.campaign.report_text import render_table
    from logomesh.home import resolve_home

    if fmt not in FORMATS:
        fail(f"--format must be one of {', '.join(FORMATS)}, not {fmt!r}", 2)
    state = resolve_home(home, create=False)
    try:
        plan = load_plan(state, campaign_id)
        built = load_report(state, plan)
    except (PlanError, LedgerError) as exc:
        fail(str(exc))
    if fmt == "json":
        text = json.dumps(report_json(built), indent=2, sort_keys=True) + "\n"
    elif fmt == "html":
        text = render_html(built)
    else:
        text = render_table(built) + "\n"
    if out is None:
        sys.stdout.write(text)
        return
    try:
        out.write_text(text, encoding="utf-8")
    except OSError as exc:
        fail(f"cannot write {out}: {exc.strerror or exc}")
    print(f"report written to {out}", file=sys.stderr)


@app.command("list")
def list_campaigns(home: HomeOption = None, as_json: JsonOption = False) -> None:
    """The campaigns under --home, with how many of their battles are recorded."""
    from ledger import LedgerError
    from logomesh.campaign.plan import PlanError, list_plans
    from logomesh.campaign.runner import recorded_battle_ids
    from logomesh.home import resolve_home

    state = resolve_home(home, create=False)
    try:
        plans = list_plans(state)
        planned = [{job.battle_id for job in p.jobs()} for p in plans]
        recorded = recorded_battle_ids(state, set().union(*planned)) if plans else set()
    except (PlanError, LedgerError) as exc:
        fail(str(exc))
    rows = [{"campaign_id": p.campaign_id, "agents": [a.name for a in p.agents], "tasks": list(p.task_ids),
             "repeat": p.repeat, "planned": len(ids), "recorded": len(ids & recorded)}
            for p, ids in zip(plans, planned, strict=True)]
    if as_json:
        print(json.dumps(rows, indent=2))
        return
    for p, row in zip(plans, rows, strict=True):
        print(f"{p.campaign_id}  {row['recorded']}/{row['planned']} recorded  "
              f"agents {', '.join(a.name for a in p.agents)}  tasks {len(p.task_ids)}  repeat {p.repeat}")
