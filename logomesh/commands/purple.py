"""``logomesh purple serve``: purple agents as A2A servers."""

from __future__ import annotations

import typer

from logomesh.commands.common import not_implemented

app = typer.Typer(help="Serve a purple (code generating) agent over A2A.", no_args_is_help=True)


@app.command("serve")
def serve() -> None:
    """Serve the mock or the LLM purple agent."""
    not_implemented("purple serve")
