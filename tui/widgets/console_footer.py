"""The footer every screen shows: compact and without the palette key below ``NARROW_BELOW`` columns.

At 80 columns the palette key (still in the header's icon, in f1 and on ctrl+p) would push the last keys,
"f1 Help" among them, off the line.
"""

from __future__ import annotations

from textual import events
from textual.widgets import Footer

NARROW_BELOW = 100  # columns: the app's breakpoint between the "-narrow" and "-wide" screen classes


class ConsoleFooter(Footer):
    def __init__(self) -> None:
        super().__init__(compact=True, show_command_palette=False)

    def on_resize(self, event: events.Resize) -> None:
        wide = self.app.size.width >= NARROW_BELOW
        if wide != self.show_command_palette:
            self.show_command_palette = wide
            self.compact = not wide
            self.call_later(self.recompose)
