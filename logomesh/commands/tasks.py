"""``logomesh tasks list``."""

from __future__ import annotations

import typer

from logomesh.commands.common import not_implemented

app = typer.Typer(help="The task library.", no_args_is_help=True)


@app.command("list")
def list_tasks() -> None:
    """List the tasks in the library."""
    not_implemented("tasks list")
