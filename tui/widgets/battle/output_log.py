"""Sandbox output: hidden-test and red-probe output, tagged with where it came from."""

from __future__ import annotations

from collections import deque

from rich.text import Text
from textual import events
from textual.widgets import RichLog

MAX_LINES = 2000
MAX_LINE_CHARS = 240
REASON_CHARS = 400  # a failed test's reason: what was got and what was expected, each up to 120 characters
STATUS_MARK = {"passed": ("✓", "green"), "failed": ("✗", "red"), "error": ("✗", "red"),
               "timeout": ("⏱", "red"), "crashed": ("✗", "bold red")}


def clip(line: str, limit: int = MAX_LINE_CHARS) -> str:
    """``line`` cut to ``limit`` characters, marking the cut."""
    return line if len(line) <= limit else line[: limit - 1] + "…"


def short_test_name(name: str) -> str:
    """``module.Class.test_x`` → ``Class.test_x``: the module is the same for a whole suite."""
    parts = name.split(".")
    return ".".join(parts[-2:]) if len(parts) > 2 else name


class SandboxLog(RichLog):
    """A capped log: at most ``MAX_LINES`` lines in memory, each at most ``MAX_LINE_CHARS`` long."""

    DEFAULT_CSS = """
    SandboxLog {
        border: round $secondary 50%;
        border-title-color: $text-muted;
        scrollbar-size-vertical: 1;
        background: $surface;
    }
    SandboxLog:focus { border: round $secondary; }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(max_lines=MAX_LINES, min_width=20, wrap=True, markup=False, highlight=False, id=id)
        self.plain_lines: deque[str] = deque(maxlen=MAX_LINES)

    def on_mount(self) -> None:
        self.border_title = "Sandbox output"

    def on_resize(self, event: events.Resize) -> None:
        """Stay at the newest line when the log shrinks (the score panel above grows as the CIS assembles), unless
        the user is reading it (it has the focus)."""
        if self.auto_scroll and not self.has_focus:
            self.scroll_end(animate=False, immediate=False, x_axis=False)

    def reset(self) -> None:
        self.clear()
        self.plain_lines.clear()

    def append_output(self, origin: str, stream: str, text: str) -> None:
        for raw in text.splitlines() or [""]:
            line = clip(raw)
            rendered = Text(f"{origin} ", style="dim cyan")
            rendered.append(line, style="red" if stream == "stderr" else "")
            self._add(rendered, f"{origin} {'!' if stream == 'stderr' else ''}{line}")

    def append_test(self, suite: str, name: str, status: str, reason: str) -> None:
        name = short_test_name(name)
        mark, style = STATUS_MARK.get(status, ("?", "yellow"))
        rendered = Text(f"{mark} ", style=style)
        rendered.append(f"{suite} {name}", style="bold" if status != "passed" else "")
        if reason:
            rendered.append(f"  {clip(reason, REASON_CHARS)}", style="dim")
        self._add(rendered, f"{mark} {suite} {name}" + (f" {reason}" if reason else ""))

    def append_note(self, text: str, style: str = "bold") -> None:
        self._add(Text(clip(text), style=style), text)

    def _add(self, rendered: Text, plain: str) -> None:
        self.plain_lines.append(plain)
        self.write(rendered)
