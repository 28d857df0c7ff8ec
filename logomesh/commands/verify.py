"""``logomesh verify ledger|bundle``: offline verification."""

from __future__ import annotations

import typer

from logomesh.commands.common import not_implemented

app = typer.Typer(help="Verify the ledger or an exported bundle.", no_args_is_help=True)


@app.command("ledger")
def ledger() -> None:
    """Recompute every hash, signature, proof and checkpoint of the ledger."""
    not_implemented("verify ledger")


@app.command("bundle")
def bundle() -> None:
    """Verify one exported compliance bundle offline."""
    not_implemented("verify bundle")
