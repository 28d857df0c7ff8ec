"""``logomesh campaign run|report``: many battles and a leaderboard."""

from __future__ import annotations

import typer

from logomesh.commands.common import not_implemented

app = typer.Typer(help="Run many battles in parallel and rank agents.", no_args_is_help=True)


@app.command("run")
def run() -> None:
    """Run every (agent, task, repeat) battle."""
    not_implemented("campaign run")


@app.command("report")
def report() -> None:
    """Per-agent, per-task statistics and a leaderboard."""
    not_implemented("campaign report")
