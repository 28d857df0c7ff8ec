"""``logomesh red attack|bench``: the red agent on its own."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from logomesh.commands.common import (
    EXIT_USAGE,
    RED_BUDGET_HELP,
    JsonOption,
    SandboxOption,
    check_seconds,
    fail,
)

if TYPE_CHECKING:
    from logomesh.tasks import TaskSpec

app = typer.Typer(help="Run the red agent against code, or benchmark it.", no_args_is_help=True)

def _check_budget(budget: float) -> None:
    check_seconds("--budget", budget)


def _load(task_id: str) -> TaskSpec:
    from logomesh.tasks import TaskError, load_task

    try:
        return load_task(task_id)
    except TaskError as exc:  # an unknown or malformed task: the caller named the wrong one
        fail(str(exc), EXIT_USAGE)


@app.command("attack")
def attack(
    task: Annotated[str, typer.Option("--task", help="Task id (see 'logomesh tasks list').")],
    code: Annotated[Path, typer.Option("--code", help="The solution.py to attack.")],
    budget: Annotated[float, typer.Option("--budget", help=RED_BUDGET_HELP)] = 10.0,
    seed: Annotated[int | None, typer.Option("--seed", help="Seed (default: a hash of the code).")] = None,
    strategy: Annotated[str, typer.Option("--strategy", help="mcts, random or round-robin.")] = "mcts",
    sandbox: SandboxOption = "auto",
    as_json: JsonOption = False,
) -> None:
    """Attack one piece of code with the MCTS red agent; only reproduced findings are reported."""
    from logomesh.context import BattleContext
    from logomesh.red import STRATEGIES
    from logomesh.red import attack as red_attack
    from logomesh.red.problem import default_seed
    from logomesh.sandbox import SandboxBroken, SandboxUnavailable, open_sandbox

    _check_budget(budget)
    if strategy not in STRATEGIES:
        fail(f"--strategy must be one of {', '.join(STRATEGIES)}, not {strategy!r}", EXIT_USAGE)
    spec = _load(task)
    try:
        source = code.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        fail(f"cannot read --code {code}: {exc.__class__.__name__}: {exc}; pass a UTF-8 Python file")
    try:
        with open_sandbox(sandbox) as box:
            battle = BattleContext(seed=default_seed(source) if seed is None else seed)
            report = red_attack(spec, source, box, battle, budget_s=budget, strategy=strategy)
    except (SandboxUnavailable, SandboxBroken) as exc:
        fail(str(exc))
    if as_json:
        print(json.dumps(report.to_json(), indent=2, sort_keys=True))
        return
    stats = report.stats
    print(f"red attack on {task}: {len(report.findings)} finding(s), {stats.iterations} iterations, "
          f"{stats.probes} probes, {stats.elapsed_s} s ({stats.stopped_because})")
    for finding in report.findings:
        print(f"  [{finding.severity}] {finding.cwe} {finding.family}: {finding.summary}")
        print(f"      reproduce: {finding.reproducer}")


@app.command("bench")
def bench(
    budget: Annotated[float, typer.Option("--budget", help="Seconds per submission and strategy.")] = 20.0,
    seed: Annotated[int, typer.Option("--seed", help="Seed for every strategy.")] = 0,
    tasks: Annotated[list[str] | None, typer.Option("--task", help="Only this task (repeatable).")] = None,
    runs: Annotated[int, typer.Option("--runs", help="MCTS runs per submission for the determinism check.")] = 3,
    sandbox: SandboxOption = "auto",
    as_json: JsonOption = False,
) -> None:
    """Recall and false positives of the red agent versus random and round-robin search."""
    from logomesh.red.bench import run_bench
    from logomesh.sandbox import SandboxBroken, SandboxUnavailable, open_sandbox
    from logomesh.tasks import all_tasks

    _check_budget(budget)
    if runs < 1:
        fail("--runs must be at least 1", EXIT_USAGE)
    chosen = [_load(t) for t in tasks] if tasks else all_tasks()
    try:
        with open_sandbox(sandbox) as box:
            result = run_bench(box, chosen, budget_s=budget, seed=seed, determinism_runs=runs,
                               progress=lambda line: print(line, file=sys.stderr, flush=True))
    except (SandboxUnavailable, SandboxBroken) as exc:
        fail(str(exc))
    summary = result.summary()
    if as_json:
        print(json.dumps(summary, indent=2, sort_keys=True))
        return
    print(f"red bench, {budget:g} s per submission and strategy")
    print(f"{'strategy':12} {'recall':>7} {'median':>7} {'p90':>7} {'FP>=med':>8} {'total s':>8}")
    for name, row in summary["strategies"].items():
        recall = "-" if row["recall"] is None else f"{row['recall']:.0%}"
        median = "-" if row["first_finding_median_s"] is None else f"{row['first_finding_median_s']:.2f}"
        p90 = "-" if row["first_finding_p90_s"] is None else f"{row['first_finding_p90_s']:.2f}"
        print(f"{name:12} {recall:>7} {median:>7} {p90:>7} {len(row['false_positives_medium_plus']):>8} "
              f"{row['total_s']:>8.1f}")
        for fp in row["false_positives_medium_plus"]:
            print(f"    false positive: {fp}")
        for miss in row["missed"]:
            print(f"    missed: {miss}")
    determinism = summary.get("determinism")
    if determinism:
        print(f"determinism: {determinism['identical']}/{determinism['cases']} submissions gave identical findings "
              f"over {runs} runs")
