"""Where to write an export: a folder, with a new folder under ``<home>/exports/`` offered as the default."""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Static


def folder_problem(folder: Path) -> str | None:
    """Why ``folder`` cannot take an export (it is a file, or a folder already holding something), or ``None``."""
    if folder.is_file():
        return f"{folder} is a file: choose a folder"
    if folder.is_dir() and any(folder.iterdir()):
        return f"{folder} is not empty: choose a new folder (an export never mixes with other files)"
    return None


class ExportDialog(ModalScreen[Path | None]):
    """Asks for the export folder; enter accepts (the default, or what was typed), esc cancels."""

    DEFAULT_CSS = """
    ExportDialog { align: center middle; }
    ExportDialog > Vertical {
        width: 90%; max-width: 100; height: auto;
        border: round $accent; background: $surface; padding: 0 1;
    }
    ExportDialog #problem { color: $error; height: auto; }
    ExportDialog #hint { color: $text-muted; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "cancel", "Cancel")]

    def __init__(self, count: int, default: Path) -> None:
        super().__init__(id="export-dialog")
        self.count = count
        self.default = default

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(f"Export {self.count} {'entry' if self.count == 1 else 'entries'} to the folder:")
            yield Input(str(self.default), id="folder")
            yield Static("", id="problem")
            yield Static("enter exports · esc cancels · a new or empty folder", id="hint")

    def on_mount(self) -> None:
        self.query_one(Vertical).border_title = "Export a compliance bundle"

    @on(Input.Submitted, "#folder")
    def _submitted(self, event: Input.Submitted) -> None:
        text = event.value.strip()
        folder = Path(text).expanduser() if text else self.default
        problem = folder_problem(folder)
        if problem is not None:
            self.query_one("#problem", Static).update(problem)
            return
        self.dismiss(folder)

    def action_cancel(self) -> None:
        self.dismiss(None)
