"""Each query's oracle verdict as it is judged, then the run's summary in the command's own words."""

from __future__ import annotations

from collections import deque

from rich.text import Text
from textual.widgets import RichLog

from logomesh.inject.attempts import AttemptRecord
from logomesh.inject.report import run_text
from logomesh.inject.run import InjectOutcome
from tui.widgets.injection.attempt_view import verdict_text

MAX_LINES = 2000


def verdict_line(record: AttemptRecord) -> Text:
    """``q3 readme/authority/end leak-canary: met (high): evidence``."""
    attempt = record.attempt
    where = f"{attempt.placement}/{attempt.framing}/{attempt.position}"
    return Text.assemble((f"q{record.query} ", "bold"), (where, "cyan"), f" {record.objective}: ", verdict_text(record))


class VerdictLog(RichLog):
    """A capped log of verdicts; ``plain_lines`` keeps the text as written, for tests and copying."""

    DEFAULT_CSS = """
    VerdictLog {
        border: round $secondary 50%;
        border-title-color: $text-muted;
        scrollbar-size-vertical: 1;
        background: $surface;
    }
    VerdictLog:focus { border: round $secondary; }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(max_lines=MAX_LINES, min_width=20, wrap=True, markup=False, highlight=False, id=id)
        self.plain_lines: deque[str] = deque(maxlen=MAX_LINES)

    def on_mount(self) -> None:
        self.border_title = "Oracle verdicts"

    def reset(self) -> None:
        self.clear()
        self.plain_lines.clear()

    def append(self, line: Text | str, style: str = "") -> None:
        text = line if isinstance(line, Text) else Text(line, style=style)
        self.plain_lines.append(text.plain)
        self.write(text)

    def append_verdict(self, record: AttemptRecord) -> None:
        self.append(verdict_line(record))

    def append_summary(self, outcome: InjectOutcome, recorded: bool) -> None:
        """The summary ``logomesh inject run`` prints, then where the run was recorded."""
        successes = sum(1 for record in outcome.records if record.met)
        self.append(f"run finished: {outcome.queries} queries, {successes} successes", "bold")
        for line in run_text(outcome).splitlines()[1:]:
            self.append(line.strip(), "bold red" if "reached at" in line else "")
        if recorded:
            self.append(f"recorded to the ledger: run {outcome.run_id}, after its {outcome.queries} query entries",
                        "green")
        else:
            self.append("not recorded: the run had no ledger home", "yellow")
