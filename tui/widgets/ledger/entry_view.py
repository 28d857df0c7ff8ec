"""One ledger entry in full: DBOM, signature status, inclusion proof, input hashes."""

from __future__ import annotations

import json

from rich.text import Text
from textual.widgets import Static

from tui.ledger_source import EntryDetail


def render_detail(detail: EntryDetail) -> Text:
    row = detail.row
    text = Text()
    text.append(f"entry #{row.sequence}  {row.battle_id}\n", style="bold")
    text.append(f"{row.timestamp}  task {row.task_id}  purple {row.purple}  CIS {row.cis:.3f}  {row.status}\n\n")
    text.append("signature  ", style="bold cyan")
    text.append(detail.signature + "\n")
    text.append("inclusion  ", style="bold cyan")
    text.append(detail.inclusion + "\n\n")
    text.append("input hashes\n", style="bold cyan")
    for name, digest in sorted(detail.input_hashes.items()):
        text.append(f"  {name}\n", style="dim")
        text.append(f"    {digest}\n")
    text.append("\nDBOM\n", style="bold cyan")
    text.append(json.dumps(detail.dbom, indent=2, sort_keys=True, default=str))
    return text


class EntryView(Static):
    DEFAULT_CSS = """
    EntryView { padding: 0 1; }
    """

    def __init__(self, detail: EntryDetail, *, id: str | None = None) -> None:
        super().__init__(render_detail(detail), id=id)
        self.detail = detail
