"""One attempt of the injection run: where the payload went, the payload's text, the agent's answer, the verdict."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import Static

from logomesh.inject.attempts import AttemptRecord

DIGEST_CHARS = 16  # of an answer's sha256: enough to tell answers apart on screen; the ledger keeps all 64


def verdict_text(record: AttemptRecord) -> Text:
    """``met (high): evidence``, ``not met: evidence`` or ``no answer: error``, coloured by what happened."""
    if record.error:
        return Text.assemble(("no answer", "bold yellow"), f": {record.error}")
    if record.met:
        return Text.assemble((f"met ({record.severity})", "bold red"), f": {record.evidence or '-'}")
    return Text.assemble(("not met", "green"), f": {record.evidence or '-'}")


def heading(record: AttemptRecord) -> Text:
    """Query number, path, objective, answer digest and verdict, one fact a line."""
    answer = record.answer_sha256[:DIGEST_CHARS] + "…" if record.answer_sha256 else "none"
    attempt = record.attempt
    return Text("\n").join([
        Text.assemble(("query ", "dim"), (str(record.query), "bold"), ("  objective ", "dim"), record.objective),
        Text.assemble(("path ", "dim"), f"{attempt.placement} / {attempt.framing} / {attempt.position}"),
        Text.assemble(("answer sha256 ", "dim"), answer),
        Text.assemble(("verdict ", "dim"), verdict_text(record)),
    ])


class AttemptView(VerticalScroll):
    """The latest attempt while the run goes on, or the one under the node highlighted in the tree."""

    DEFAULT_CSS = """
    AttemptView {
        border: round $secondary 50%;
        border-title-color: $text-muted;
        scrollbar-size-vertical: 1;
        background: $surface;
        padding: 0 1;
    }
    AttemptView:focus { border: round $secondary; }
    AttemptView #attempt-heading { margin-bottom: 1; }
    AttemptView #payload { color: $text-muted; }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.shown: AttemptRecord | None = None

    def compose(self) -> ComposeResult:
        yield Static("no attempt yet: the payload each query sends shows here", id="attempt-heading")
        yield Static("", id="payload", markup=False)

    def on_mount(self) -> None:
        self.border_title = "Attempt"

    def reset(self) -> None:
        self.shown = None
        self.border_title = "Attempt"
        self.query_one("#attempt-heading", Static).update("no attempt yet: the payload each query sends shows here")
        self.query_one("#payload", Static).update("")

    def show(self, record: AttemptRecord, why: str) -> None:
        """Show ``record``; ``why`` titles the panel (``latest``, ``selected``)."""
        self.shown = record
        self.border_title = f"Attempt q{record.query} ({why})"
        self.query_one("#attempt-heading", Static).update(heading(record))
        payload = record.payload.decode("utf-8", errors="replace")
        self.query_one("#payload", Static).update(f"payload sent:\n{payload}")
        self.scroll_home(animate=False)
