"""The entry detail screen, pushed over the ledger screen."""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.screen import ModalScreen

from tui.ledger_source import EntryDetail
from tui.widgets.ledger.entry_view import EntryView


class EntryScreen(ModalScreen[None]):
    DEFAULT_CSS = """
    EntryScreen { align: center middle; }
    EntryScreen > VerticalScroll {
        width: 100%; max-width: 110; height: 100%; max-height: 40;
        border: round $accent; background: $surface;
    }
    """
    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape,q", "close", "Close")]

    def __init__(self, detail: EntryDetail) -> None:
        super().__init__()
        self.detail = detail

    def compose(self) -> ComposeResult:
        with VerticalScroll() as scroll:
            scroll.border_title = f"Entry #{self.detail.row.sequence}  (esc closes)"
            yield EntryView(self.detail, id="entry")

    def on_mount(self) -> None:
        self.query_one(VerticalScroll).focus()

    def action_close(self) -> None:
        self.dismiss(None)
