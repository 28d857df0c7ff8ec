"""``logomesh export dboms``: signed decision records for compliance."""

from __future__ import annotations

import typer

from logomesh.commands.common import not_implemented

app = typer.Typer(help="Export signed decision records.", no_args_is_help=True)


@app.command("dboms")
def dboms() -> None:
    """Write a compliance bundle per battle plus an index."""
    not_implemented("export dboms")
