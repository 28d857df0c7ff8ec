"""The entry detail screen, pushed over the ledger screen: summary first, then code, tests, proof, DBOM."""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import ScrollableContainer, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static, TabbedContent, TabPane

from tui.ledger_source import EntryDetail
from tui.widgets.ledger.entry_view import EntryView, render_code, render_dbom, render_proof

# (tab id, title, key): the key opens the tab.
TABS = (("summary", "Summary", "s"), ("code", "Code", "c"), ("tests", "Tests", "t"), ("proof", "Proof", "p"),
        ("dbom", "DBOM", "d"))


class EntryScreen(ModalScreen[None]):
    DEFAULT_CSS = """
    EntryScreen { align: center middle; }
    EntryScreen > Vertical {
        width: 100%; max-width: 120; height: 100%; max-height: 44;
        border: round $accent; background: $surface;
    }
    EntryScreen TabPane { padding: 0; }
    EntryScreen .code { padding: 0 1; width: auto; }
    EntryScreen .plain { padding: 0 1; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,q", "close", "Close"),
        Binding("f1", "app.help", "Help"),  # a modal screen does not pass keys on to the app's bindings
        *(Binding(key, f"show('{tab}')", title) for tab, title, key in TABS),
    ]

    def __init__(self, detail: EntryDetail) -> None:
        super().__init__(id="entry")
        self.detail = detail

    def compose(self) -> ComposeResult:
        keys = " ".join(f"{key} {title.lower()}" for _, title, key in TABS)
        with Vertical() as frame:
            frame.border_title = f"Entry #{self.detail.row.sequence}"
            frame.border_subtitle = f"{keys} · esc closes"
            with TabbedContent(initial="summary"):
                with TabPane("Summary", id="summary"), VerticalScroll():
                    yield EntryView(self.detail, id="entry-summary")
                with TabPane("Code", id="code"), ScrollableContainer():  # long lines scroll sideways
                    yield Static(render_code(self.detail, "source"), id="entry-code", classes="code")
                with TabPane("Tests", id="tests"), ScrollableContainer():
                    yield Static(render_code(self.detail, "tests"), id="entry-tests", classes="code")
                with TabPane("Proof", id="proof"), VerticalScroll():
                    yield Static(render_proof(self.detail), id="entry-proof", classes="plain")
                with TabPane("DBOM", id="dbom"), VerticalScroll():
                    yield Static(render_dbom(self.detail), id="entry-dbom", classes="plain")

    def on_mount(self) -> None:
        self.call_after_refresh(self._focus_view)  # the tabs mount their panes after the screen

    def action_show(self, tab: str) -> None:
        self.query_one(TabbedContent).active = tab
        self.call_after_refresh(self._focus_view)

    def _focus_view(self) -> None:
        """Focus the shown view's scroller, so the arrows and page keys scroll it."""
        tabs = self.query(TabbedContent)
        pane = tabs.first().active_pane if tabs else None
        if pane is not None:
            pane.query_one(ScrollableContainer).focus()

    def action_close(self) -> None:
        self.dismiss(None)
