"""``logomesh keys init|show``: the judge's Ed25519 key."""

from __future__ import annotations

import typer

from logomesh.commands.common import not_implemented

app = typer.Typer(help="Create or show the judge key.", no_args_is_help=True)


@app.command("init")
def init() -> None:
    """Create the judge key under --home/keys/."""
    not_implemented("keys init")


@app.command("show")
def show() -> None:
    """Print the public key in C2SP verifier-key format."""
    not_implemented("keys show")
