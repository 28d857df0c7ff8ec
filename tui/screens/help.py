"""The help screen: every key of the app and of the screen underneath, then what that screen's symbols mean."""

from __future__ import annotations

from typing import Any, ClassVar

from rich.table import Table
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.screen import ModalScreen, Screen
from textual.widgets import Static

from tui.screens.help_guide import legend, widget_keys

# Actions kept out of the footer for room, but worth listing here.
UNLISTED_ACTIONS = frozenset({"focus_tree", "focus_output", "quit", "reload", "show_injection"})


def binding_rows(screen: Screen[Any]) -> list[tuple[str, str]]:
    """(keys, description) for the bindings in force on ``screen``: app, screen and focused widget.

    Generic widget keys (cursor movement, copy) hidden from the footer stay hidden here; the keys that
    matter on this screen (enter, space, arrows) are listed from ``help_guide`` instead.
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
    rows.extend(widget_keys(screen.id))
    return rows


def _table(rows: list[tuple[str, str]]) -> Table:
    table = Table(box=None, show_header=False, expand=True, padding=(0, 1, 0, 0))
    table.add_column(style="bold cyan", no_wrap=True)
    table.add_column(ratio=1)
    for keys, description in rows:
        table.add_row(keys, description)
    return table


class HelpScreen(ModalScreen[None]):
    DEFAULT_CSS = """
    HelpScreen { align: center middle; }
    HelpScreen > VerticalScroll {
        width: 90; max-width: 100%; height: auto; max-height: 100%;
        border: round $accent; background: $surface; padding: 0 1;
    }
    HelpScreen .heading { text-style: bold; margin-top: 1; }
    HelpScreen #keys-heading { margin-top: 0; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape,q,f1", "dismiss_help", "Close")]

    def __init__(self, rows: list[tuple[str, str]], symbols: list[tuple[str, str]] | None = None) -> None:
        super().__init__()
        self.rows = rows
        self.symbols = symbols or []

    @classmethod
    def of(cls, screen: Screen[Any]) -> HelpScreen:
        """The help for ``screen``: its keys, then its legend."""
        return cls(binding_rows(screen), legend(screen.id))

    def compose(self) -> ComposeResult:
        with VerticalScroll() as scroll:
            scroll.border_title = "Help  (esc closes)"
            yield Static("Keys", classes="heading", id="keys-heading")
            yield Static(_table([*self.rows, ("ctrl+p", "command palette: every action by name")]), id="keys")
            if self.symbols:
                yield Static("What the symbols mean", classes="heading")
                yield Static(_table(self.symbols), id="legend")

    def action_dismiss_help(self) -> None:
        self.dismiss(None)
