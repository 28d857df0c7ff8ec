"""The help screen: every key binding of the app and of the screen underneath."""

from __future__ import annotations

from typing import Any, ClassVar

from rich.table import Table
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.screen import ModalScreen, Screen
from textual.widgets import Static

# Actions kept out of the footer for room, but worth listing here.
UNLISTED_ACTIONS = frozenset({"focus_tree", "focus_output"})


def binding_rows(screen: Screen[Any]) -> list[tuple[str, str]]:
    """(keys, description) for the bindings in force on ``screen``: app, screen and focused widget.

    Generic widget keys (cursor movement, copy) hidden from the footer stay hidden here too.
    """
    rows: list[tuple[str, str]] = []
    seen: set[str] = set()
    for _, binding, enabled, tooltip in screen.active_bindings.values():
        description = binding.description or tooltip or binding.action
        listed = binding.show or binding.action in UNLISTED_ACTIONS
        if description in seen or not enabled or not listed:
            continue
        seen.add(description)
        rows.append((screen.app.get_key_display(binding), description))
    return rows


class HelpScreen(ModalScreen[None]):
    DEFAULT_CSS = """
    HelpScreen { align: center middle; }
    HelpScreen > VerticalScroll {
        width: 60; max-width: 100%; height: auto; max-height: 90%;
        border: round $accent; background: $surface; padding: 0 1;
    }
    """
    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape,q,f1", "dismiss_help", "Close")]

    def __init__(self, rows: list[tuple[str, str]]) -> None:
        super().__init__()
        self.rows = rows

    def compose(self) -> ComposeResult:
        table = Table(box=None, show_header=False, expand=True)
        table.add_column(style="bold cyan", no_wrap=True)
        table.add_column()
        for keys, description in self.rows:
            table.add_row(keys, description)
        table.add_row("ctrl+p", "command palette: every action by name")
        with VerticalScroll() as scroll:
            scroll.border_title = "Keys  (esc closes)"
            yield Static(table, id="keys")

    def action_dismiss_help(self) -> None:
        self.dismiss(None)
