"""The CIS assembling itself: R, A, T, L with bars and facts, the raw sum, each penalty, the band, then the CIS.

The engine may emit every score event in one burst at the end of a battle; the panel still reveals them
one step at a time (``REVEAL_S`` apart) with the arithmetic that joins them, so a person can follow how
the score is built. Pacing is the panel's alone: the engine never waits for it.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from functools import cache

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Horizontal, VerticalScroll
from textual.geometry import Size
from textual.timer import Timer
from textual.widgets import Digits, Static

from logomesh.events import ComponentFact
from tui.widgets.console_footer import NARROW_BELOW

COMPONENTS = (("rationale", "R"), ("architecture", "A"), ("testing", "T"), ("logic", "L"))
BAR_WIDTH = 10
MIN_BAR = 4  # the narrowest bar worth drawing: below it the bar goes, so the facts stay whole
NAMED_FROM = 56  # cells: a component row this wide has room for its name and about 24 cells of facts
MAX_HISTORY = 120
REVEAL_S = 0.3  # between two steps of the score's assembly
MISMATCH = 0.0005  # below the three digits shown: the arithmetic and the engine's CIS agree


@cache
def weights() -> tuple[float, float, float, float]:
    """The scorer's R, A, T, L weights (imported on first use: the scoring package is slow to import)."""
    from logomesh.scoring.config import DEFAULT_CONFIG

    return DEFAULT_CONFIG.weights


def raw_line(values: Mapping[str, float], w: Sequence[float]) -> tuple[str, float]:
    """``raw = 0.25×(R+A+T+L) = 0.836`` (or the weighted terms when the weights differ) and the raw value."""
    parts = [values[name] for name, _ in COMPONENTS]
    raw = sum(weight * part for weight, part in zip(w, parts, strict=True))
    letters = [letter for _, letter in COMPONENTS]
    if len(set(w)) == 1:
        formula = f"{w[0]:g}×({'+'.join(letters)})"
    else:
        formula = "+".join(f"{weight:g}{letter}" for weight, letter in zip(w, letters, strict=True))
    return f"raw = {formula} = {raw:.3f}", raw


def final_lines(raw: float | None, factors: Sequence[float], cis: float,
                band: tuple[bool, float] | None = None, width: int = 0) -> list[str]:
    """``CIS = 0.836 × 0.800 = 0.669``; when the engine's CIS differs from that arithmetic, a last line gives it.

    With ``band`` (all hidden tests passed, boundary B) the product is x and a second line places it in its band:
    ``all hidden passed: CIS = 0.5 + 0.5×x = 0.834`` or ``not all hidden passed: CIS = 0.5×x = 0.334``; wider
    than ``width`` cells (the 80-column panel), its condition and its formula take a line each, so neither is cut.
    They differ when the bounded LLM review adjusted R, A or L after the components were sent.
    """
    if raw is None:
        return [f"CIS = {cis:.3f}"]
    product = raw
    for factor in factors:
        product *= factor
    terms = " × ".join([f"{raw:.3f}", *(f"{factor:.3f}" for factor in factors)])
    name = "CIS" if band is None else "x"
    lines = [f"{name} = {terms} = {product:.3f}" if factors else f"{name} = raw = {raw:.3f}"]
    expected = product
    if band is not None:
        all_passed, boundary = band
        if all_passed:
            expected = boundary + (1.0 - boundary) * product
            condition, formula = "all hidden passed:", f"CIS = {boundary:g} + {1.0 - boundary:g}×x = {expected:.3f}"
        else:
            expected = boundary * product
            condition, formula = "not all hidden passed:", f"CIS = {boundary:g}×x = {expected:.3f}"
        whole = f"{condition} {formula}"
        lines.extend([condition, formula] if 0 < width < len(whole) else [whole])
    if abs(expected - cis) > MISMATCH:
        lines.append(f"CIS {cis:.3f} as recorded")
    return lines


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


def facts(details: Mapping[str, ComponentFact], limit: int = 3) -> str:
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


def component_line(letter: str, name: str, value: float, details: Mapping[str, ComponentFact], width: int) -> Text:
    """``R rationale    ████████░░ 0.826 cosine=0.83 windows=1`` in ``width`` cells with the facts whole.

    Below ``NAMED_FROM`` cells every row drops the name (the letter stays); a line still too long narrows its bar
    down to ``MIN_BAR``, then drops it (the value stays); the facts are cut only if even that is not enough.
    """
    shown = facts(details)
    figure = f" {value:.3f} "
    named = width <= 0 or width >= NAMED_FROM
    label, bar_width = (f"{letter} {name:<12} " if named else f"{letter} "), BAR_WIDTH
    if width > 0 and len(label) + bar_width + len(figure) + len(shown) > width:
        spare = width - len(label) - len(figure) - len(shown)
        bar_width = min(BAR_WIDTH, spare) if spare >= MIN_BAR else 0
    text = Text(label, style="bold", no_wrap=True, overflow="ellipsis")
    text.append(bar(value, bar_width), style="green" if value >= 0.7 else "yellow" if value >= 0.4 else "red")
    text.append(figure)
    text.append(shown, style="dim")
    return text


class ComponentRow(Static):
    """One CIS component, drawn for the width it has (``component_line``): pending until ``show``."""

    def __init__(self, letter: str, name: str, *, id: str | None = None) -> None:
        super().__init__(id=id, classes="score-row pending")
        self.letter, self.component = letter, name
        self.figures: tuple[float, dict[str, ComponentFact]] | None = None

    def show(self, value: float, details: Mapping[str, ComponentFact]) -> None:
        self.figures = (value, dict(details))
        self.remove_class("pending")
        self.refresh()

    def clear(self) -> None:
        self.figures = None
        self.add_class("pending")
        self.refresh()

    def render(self) -> Text:
        if self.figures is None:
            return Text(f"{self.letter} {self.component:<12} ·")
        return component_line(self.letter, self.component, *self.figures, self.content_size.width)


def penalty_text(penalties: Sequence[tuple[str, float, str]], one_line: bool) -> Text:
    """``× 0.750 red:high  1 confirmed high finding(s)``, one line each; or all on one line, without the reasons
    (the 80x24 panel has no rows to spare: the entry detail and the wide layout give them)."""
    text = Text(no_wrap=True, overflow="ellipsis")
    for index, (penalty, value, why) in enumerate(penalties):
        if index:
            text.append("  " if one_line else "\n")
        text.append(f"× {value:.3f} ", style="bold red")
        text.append(penalty)
        if why and not one_line:
            text.append(f"  {why}", style="dim")
    return text


class FinalRows(Static):
    """The CIS's last arithmetic (``final_lines``) and the battle's status, drawn for the width it has: the band's
    line splits in two where it would be cut. Empty until ``show``."""

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__("", id=id, classes=classes)
        self.figures: tuple[float | None, list[float], float, tuple[bool, float] | None, str] | None = None

    def show(self, raw: float | None, factors: Sequence[float], cis: float, band: tuple[bool, float] | None,
             status: str) -> None:
        self.figures = (raw, list(factors), cis, band, status)
        self.refresh(layout=True)

    def clear(self) -> None:
        self.figures = None
        self.refresh(layout=True)

    def text_for(self, width: int) -> Text:
        """What is drawn in ``width`` cells (the status keeps its room on the last line)."""
        if self.figures is None:
            return Text("")
        raw, factors, cis, band, status = self.figures
        suffix = f"  {status}"
        lines = final_lines(raw, factors, cis, band, max(1, width - len(suffix)))
        text = Text("\n".join(lines), style="bold", no_wrap=True, overflow="ellipsis")
        text.append(suffix, style="bold green" if status == "scored" else "bold red")
        return text

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        return len(self.text_for(width).plain.splitlines()) if self.figures is not None else 1

    def render(self) -> Text:
        return self.text_for(self.content_size.width)


class ScorePanel(VerticalScroll):
    """The screen calls ``show_component``, ``show_penalty``, ``show_band``, ``show_final``.

    ``values``, ``penalties``, ``band`` and ``final`` hold what the engine sent; the rows show it one step at a time
    (``revealing`` is true while steps wait).
    """

    DEFAULT_CSS = """
    ScorePanel {
        border: round $accent 50%;
        border-title-color: $text-muted;
        height: auto;
        max-height: 16;
        scrollbar-size-vertical: 1;
    }
    ScorePanel .score-row { height: 1; text-wrap: nowrap; text-overflow: ellipsis; }
    ScorePanel .pending { color: $text-disabled; }
    ScorePanel #penalties { height: auto; text-wrap: nowrap; text-overflow: ellipsis; }
    ScorePanel #sum { height: auto; }
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
        self.band: tuple[bool, float] | None = None  # (every hidden test passed, boundary) from CorrectnessBand
        self.final: float | None = None
        self.history: list[float] = []
        self._steps: deque[Callable[[], None]] = deque()
        self._pacer: Timer | None = None
        self._shown: dict[str, float] = {}
        self._shown_penalties: list[tuple[str, float, str]] = []
        self._raw: float | None = None
        self.reveals: list[tuple[str, float]] = []  # (step, monotonic time it was shown), for the pacing's tests

    def compose(self) -> ComposeResult:
        for name, letter in COMPONENTS:
            yield ComponentRow(letter, name, id=f"comp-{name}")
        yield Static("", id="raw", classes="score-row")
        yield Static("", id="penalties", classes="pending")
        yield FinalRows(id="sum", classes="score-row")
        yield Static("", id="history", classes="empty")
        with Horizontal(id="cis-row"):
            yield Static("CIS", id="cis-label")
            yield Digits("-.---", id="cis")

    def on_mount(self) -> None:
        self.border_title = "Contextual Integrity Score"
        self.query_one("#raw", Static).display = False
        self.query_one("#sum", Static).display = False

    @property
    def revealing(self) -> bool:
        """Steps of the score's assembly are still waiting to be shown."""
        return bool(self._steps)

    def _pace(self, step: Callable[[], None]) -> None:
        """Run ``step`` now if nothing waits and the last step is ``REVEAL_S`` old, else after the ones queued."""
        self._steps.append(step)
        if self._pacer is None:
            self._next_step()

    def _next_step(self) -> None:
        """Show one waiting step, then wait ``REVEAL_S`` (a one-shot timer never fires early, so a late
        tick cannot bunch two steps together as an interval timer catching up would)."""
        self._pacer = None
        if self._steps:
            self._steps.popleft()()
            self._pacer = self.set_timer(REVEAL_S, self._next_step)

    def reset(self) -> None:
        self.values.clear()
        self.penalties.clear()
        self.band = None
        self.final = None
        self.history.clear()
        self._steps.clear()
        self._shown.clear()
        self._shown_penalties.clear()
        self._raw = None
        self.reveals.clear()
        for name, _ in COMPONENTS:
            self.query_one(f"#comp-{name}", ComponentRow).clear()
        self.query_one("#sum", FinalRows).clear()
        for row_id in ("#raw", "#sum"):  # shown once their arithmetic can be done
            self.query_one(row_id, Static).display = False
        self.query_one("#raw", Static).update("")
        self.query_one("#penalties", Static).update("")
        self.query_one("#penalties", Static).add_class("pending")
        history = self.query_one("#history", Static)
        history.update("")
        history.add_class("empty")
        cis = self.query_one("#cis", Digits)
        cis.update("-.---")
        cis.remove_class("failed")
        self.query_one("#cis-label", Static).update("CIS")

    def show_component(self, name: str, value: float, details: Mapping[str, ComponentFact]) -> None:
        self.values[name] = value
        self._pace(lambda: self._reveal_component(name, value, dict(details)))

    @property
    def shown(self) -> list[str]:
        """The components on screen so far, in the order they were revealed."""
        return list(self._shown)

    def _reveal_component(self, name: str, value: float, details: Mapping[str, ComponentFact]) -> None:
        self._shown[name] = value
        self.reveals.append((name, time.monotonic()))
        letter = dict(COMPONENTS).get(name, name[:1].upper())
        try:
            row = self.query_one(f"#comp-{name}", ComponentRow)
        except Exception:
            row = ComponentRow(letter, name, id=f"comp-{name}")
            self.mount(row, before=self.query_one("#penalties"))
        row.show(value, details)
        if all(name in self._shown for name, _ in COMPONENTS):
            line, self._raw = raw_line(self._shown, weights())
            raw = self.query_one("#raw", Static)
            raw.update(Text(line, style="bold", no_wrap=True, overflow="ellipsis"))
            raw.display = True

    def show_penalty(self, name: str, factor: float, reason: str) -> None:
        self.penalties.append((name, factor))
        self._pace(lambda: self._reveal_penalty(name, factor, reason))

    def _reveal_penalty(self, name: str, factor: float, reason: str) -> None:
        self._shown_penalties.append((name, factor, reason))
        self.reveals.append((name, time.monotonic()))
        widget = self.query_one("#penalties", Static)
        widget.update(penalty_text(self._shown_penalties, self.app.size.width < NARROW_BELOW))
        widget.remove_class("pending")

    def show_band(self, all_passed: bool, boundary: float) -> None:
        """The correctness band the CIS is placed in: not a step of its own, it is shown in the final CIS's
        arithmetic (``final_lines``), which always comes after it."""
        self.band = (all_passed, boundary)

    def show_final(self, cis: float, status: str) -> None:
        self.final = cis
        self._pace(lambda: self._reveal_final(cis, status))

    def _reveal_final(self, cis: float, status: str) -> None:
        self.reveals.append(("CIS", time.monotonic()))
        factors = [factor for _, factor, _ in self._shown_penalties]
        total = self.query_one("#sum", FinalRows)
        total.show(self._raw, factors, cis, self.band, status)
        total.display = True
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
