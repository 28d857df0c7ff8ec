"""The CIS assembling itself: R, A, T, L with bars and facts, then penalties, then the final CIS."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Horizontal, VerticalScroll
from textual.widgets import Digits, Static

COMPONENTS = (("rationale", "R"), ("architecture", "A"), ("testing", "T"), ("logic", "L"))
BAR_WIDTH = 10
MAX_HISTORY = 120


def bar(value: float, width: int = BAR_WIDTH) -> str:
    """A block bar for a value in [0, 1]."""
    filled = round(max(0.0, min(1.0, value)) * width)
    return "█" * filled + "░" * (width - filled)


SPARKS = "▁▂▃▄▅▆▇█"


def sparkline(values: Sequence[float], width: int) -> str:
    """The last ``width`` values as bars on an absolute 0..1 scale, so a flat search looks flat."""
    shown = values[-width:] if width > 0 else []
    top = len(SPARKS) - 1
    return "".join(SPARKS[round(max(0.0, min(1.0, v)) * top)] for v in shown)


def facts(details: Mapping[str, Any], limit: int = 3) -> str:
    """The first few facts behind a component, as ``key=value``."""
    parts: list[str] = []
    for key, value in list(details.items())[:limit]:
        if isinstance(value, float):
            shown = f"{value:.2f}"
        elif isinstance(value, list | tuple | dict):
            shown = str(len(value))
        else:
            shown = str(value)
        parts.append(f"{key}={shown}")
    return " ".join(parts)


class ScorePanel(VerticalScroll):
    """Widgets call ``show_component``, ``show_penalty``, ``show_final``; tests read ``values``."""

    DEFAULT_CSS = """
    ScorePanel {
        border: round $accent 50%;
        border-title-color: $text-muted;
        height: auto;
        max-height: 14;
        scrollbar-size-vertical: 1;
    }
    ScorePanel .score-row { height: 1; text-wrap: nowrap; text-overflow: ellipsis; }
    ScorePanel .pending { color: $text-disabled; }
    ScorePanel #penalties { height: auto; text-wrap: nowrap; text-overflow: ellipsis; }
    ScorePanel #penalties.pending { display: none; }
    ScorePanel #cis-row { height: auto; }
    ScorePanel #cis { width: auto; color: $success; }
    ScorePanel #cis.failed { color: $error; }
    ScorePanel #cis-label { width: auto; padding: 1 1 0 0; }
    ScorePanel #history { height: 1; margin: 0 0; text-wrap: nowrap; text-overflow: ellipsis; }
    ScorePanel #history.empty { display: none; }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.values: dict[str, float] = {}
        self.penalties: list[tuple[str, float]] = []
        self.final: float | None = None
        self.history: list[float] = []

    def compose(self) -> ComposeResult:
        for name, letter in COMPONENTS:
            yield Static(f"{letter} {name:<12} ·", id=f"comp-{name}", classes="score-row pending")
        yield Static("", id="penalties", classes="pending")
        yield Static("", id="history", classes="empty")
        with Horizontal(id="cis-row"):
            yield Static("CIS", id="cis-label")
            yield Digits("-.---", id="cis")

    def on_mount(self) -> None:
        self.border_title = "Contextual Integrity Score"

    def reset(self) -> None:
        self.values.clear()
        self.penalties.clear()
        self.final = None
        self.history.clear()
        for name, letter in COMPONENTS:
            row = self.query_one(f"#comp-{name}", Static)
            row.update(f"{letter} {name:<12} ·")
            row.add_class("pending")
        self.query_one("#penalties", Static).update("")
        history = self.query_one("#history", Static)
        history.update("")
        history.add_class("empty")
        cis = self.query_one("#cis", Digits)
        cis.update("-.---")
        cis.remove_class("failed")
        self.query_one("#cis-label", Static).update("CIS")

    def show_component(self, name: str, value: float, details: Mapping[str, Any]) -> None:
        self.values[name] = value
        letter = dict(COMPONENTS).get(name, name[:1].upper())
        text = Text(f"{letter} {name:<12} ", style="bold", no_wrap=True, overflow="ellipsis")
        text.append(bar(value), style="green" if value >= 0.7 else "yellow" if value >= 0.4 else "red")
        text.append(f" {value:.3f} ")
        text.append(facts(details), style="dim")
        try:
            row = self.query_one(f"#comp-{name}", Static)
        except Exception:
            row = Static(id=f"comp-{name}", classes="score-row")
            self.mount(row, before=self.query_one("#penalties"))
        row.update(text)
        row.remove_class("pending")

    def show_penalty(self, name: str, factor: float, reason: str) -> None:
        self.penalties.append((name, factor))
        text = Text(no_wrap=True, overflow="ellipsis")
        for index, (penalty, value) in enumerate(self.penalties):
            if index:
                text.append("\n")
            text.append(f"× {value:.3f} ", style="bold red")
            text.append(penalty)
        if reason:
            text.append(f"  {reason}", style="dim")
        widget = self.query_one("#penalties", Static)
        widget.update(text)
        widget.remove_class("pending")

    def show_final(self, cis: float, status: str) -> None:
        self.final = cis
        digits = self.query_one("#cis", Digits)
        digits.update(f"{cis:.3f}")
        digits.set_class(status != "scored", "failed")
        self.query_one("#cis-label", Static).update(f"CIS\n{status}")

    def push_best_value(self, value: float) -> None:
        self.history.append(value)
        del self.history[:-MAX_HISTORY]
        history = self.query_one("#history", Static)
        width = max(0, self.scrollable_content_region.width - 12)
        text = Text(f"best {value:.2f} ", style="bold", no_wrap=True)
        text.append(sparkline(self.history, width), style="green")
        history.update(text)
        history.remove_class("empty")
