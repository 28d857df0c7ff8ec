"""``logomesh red attack|bench``: the red agent on its own."""

from __future__ import annotations

import typer

from logomesh.commands.common import not_implemented

app = typer.Typer(help="Run the red agent against code, or benchmark it.", no_args_is_help=True)


@app.command("attack")
def attack() -> None:
    """Attack one piece of code with the MCTS red agent."""
    not_implemented("red attack")


@app.command("bench")
def bench() -> None:
    """Recall and false positives of the red agent versus random search."""
    not_implemented("red bench")
