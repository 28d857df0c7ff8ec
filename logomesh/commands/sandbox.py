"""``logomesh sandbox doctor|build``."""

from __future__ import annotations

import typer

from logomesh.commands.common import not_implemented

app = typer.Typer(help="Check and build the sandbox.", no_args_is_help=True)


@app.command("doctor")
def doctor() -> None:
    """Say which sandbox backends work here, and why not."""
    not_implemented("sandbox doctor")


@app.command("build")
def build() -> None:
    """Build the sandbox image."""
    not_implemented("sandbox build")
