"""``logomesh green serve``: the judge as an A2A server."""

from __future__ import annotations

import typer

from logomesh.commands.common import not_implemented

app = typer.Typer(help="Serve the green (judge) agent over A2A.", no_args_is_help=True)


@app.command("serve")
def serve() -> None:
    """Serve the green agent (AgentBeats assessment protocol)."""
    not_implemented("green serve")
