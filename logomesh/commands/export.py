"""``logomesh export dboms``: signed decision records for compliance."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from logomesh.commands.common import EXIT_USAGE, HomeOption, JsonOption, fail
from logomesh.home import resolve_home
from logomesh.plural import counted

app = typer.Typer(help="Export signed decision records.", no_args_is_help=True)


@app.command("dboms")
def dboms(
    out: Annotated[Path, typer.Option("--out", help="Folder to write the bundles and index into.")],
    since: Annotated[int, typer.Option("--since", help="First sequence number to export.")] = 0,
    home: HomeOption = None,
    as_json: JsonOption = False,
) -> None:
    """Write a compliance bundle per battle plus an index, the checkpoint and the public key."""
    from ledger import LedgerError
    from ledger.export import export_dboms

    if since < 0:
        fail("--since must be a sequence number (0 or more)", EXIT_USAGE)
    try:
        summary = export_dboms(resolve_home(home, create=False), out, since=since)
    except LedgerError as exc:
        fail(str(exc))
    if as_json:
        print(json.dumps({"out": str(summary.out), "bundles": summary.count, "tree_size": summary.tree_size,
                          "index": str(summary.index)}, indent=2))
    else:
        print(f"exported {counted(summary.count, 'bundle')} (tree size {summary.tree_size}) to {summary.out}; "
              f"index {summary.index}")
