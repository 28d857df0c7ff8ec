"""``logomesh battle run``."""

from __future__ import annotations

import typer

from logomesh.commands.common import not_implemented

app = typer.Typer(help="Run one battle.", no_args_is_help=True)


@app.command("run")
def run() -> None:
    """Send a task to a purple agent, sandbox, attack, score and record the answer."""
    not_implemented("battle run")
