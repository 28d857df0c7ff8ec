"""One ledger entry in full: a summary first, then the purple's code and tests, the proof, the DBOM."""

from __future__ import annotations

import json

from rich.syntax import Syntax
from rich.text import Text
from textual.widgets import Static

from logomesh.battle.scores import Scores, SuiteTally
from tui.findings import SEVERITY_STYLE
from tui.ledger_source import EntryDetail, evidence_for

CODE_THEME = "monokai"


REPRODUCER_CHARS = 160  # of a finding's reproducer in the summary; the full one is in the DBOM tab


def _suite(counts: SuiteTally | None, name: str) -> str:
    if counts is None or not counts.total:
        return f"{name} tests: none run"
    return f"{name} tests {counts.passed}/{counts.total} passed"


def render_summary(detail: EntryDetail) -> Text:
    """The verdict at a glance: CIS, its components and arithmetic, the findings (with what reproduces them and
    what the red agent measured), the failure reason."""
    row, parsed = detail.row, detail.result
    scores = parsed.scores if parsed is not None else Scores.from_json({})
    text = Text()
    text.append(f"entry #{row.sequence}  {row.battle_id}\n", style="bold")
    status_style = "bold green" if row.status == "scored" else "bold red"
    text.append(row.status, style=status_style)
    text.append(f"  CIS {row.cis_text}  task {row.task_id}  purple {row.purple}  {row.timestamp}\n\n")
    if row.status != "scored" and parsed is not None and parsed.ending.reason:
        text.append("failure  ", style="bold red")
        text.append(f"at {parsed.ending.stage or '?'}: {parsed.ending.reason}\n\n")
    if parsed is not None and parsed.finish is not None:  # how the purple's model answer ended, where reported
        text.append("answer   ", style="bold yellow" if parsed.finish.truncated is not False else "bold")
        text.append(parsed.finish.note + "\n\n", style="bold yellow" if parsed.truncated else "")
    for letter, name, value in scores.components.named():
        text.append(f"{letter} {name:<13}", style="bold")
        text.append(f"{value:.3f}\n" if value is not None else "—\n")
    raw, red, intent = scores.cis_raw, scores.penalties.red, scores.penalties.intent
    behaviour = scores.penalties.behaviour  # absent from entries scored before it existed
    if raw is not None:
        text.append(f"raw {raw:.3f}", style="bold")
        text.append(f" × (1 − red {red or 0.0:.3f}) × intent {intent if intent is not None else 1.0:.3f}")
        if behaviour is not None:
            text.append(f" × behaviour {behaviour:.3f}")
        within, band = scores.cis_within_band, scores.band  # absent before the band existed
        if within is not None and band is not None:
            boundary = band.boundary
            text.append(f" = x {within:.3f}\n", style="bold")
            if band.all_hidden_passed:
                text.append(f"all hidden tests passed: CIS = {boundary:g} + {1.0 - boundary:g}×x")
            else:
                text.append(f"not all hidden tests passed: CIS = {boundary:g}×x")
            text.append(f" = {row.cis_text}\n", style="bold")
        else:
            text.append(f" = CIS {row.cis_text}\n", style="bold")
    text.append(f"{_suite(scores.hidden, 'hidden')} · {_suite(scores.purple, 'purple')}\n\n")
    findings = scores.findings
    text.append(f"findings ({len(findings)})\n", style="bold cyan")
    if not findings:
        text.append("  none confirmed\n", style="dim")
    for finding in findings:
        severity = finding.severity or "?"
        text.append("  ⚑ ")
        text.append(f"{severity:<8}", style=SEVERITY_STYLE.get(severity, "red"))
        text.append(f" {finding.family or '?'}  {finding.cwe}\n")
        text.append(f"      {finding.summary}\n", style="dim")
        reproducer = " ".join(finding.reproducer.split())
        if reproducer:  # what the red agent ran to show it, as the result records it
            text.append("      reproduce: ", style="bold")
            text.append(f"{reproducer[:REPRODUCER_CHARS]}{'…' if len(reproducer) > REPRODUCER_CHARS else ''}\n")
        measured = " ".join(evidence_for(detail.evidence, finding.family, finding.summary).split())
        if measured:  # what the probes measured, kept beside the result as the signed input red_evidence
            text.append("      evidence: ", style="bold")
            text.append(f"{measured[:REPRODUCER_CHARS]}{'…' if len(measured) > REPRODUCER_CHARS else ''}\n")
    text.append("\nsignature  ", style="bold cyan")
    text.append(detail.signature.splitlines()[0] + "\n")
    text.append("inclusion  ", style="bold cyan")
    text.append(detail.inclusion.splitlines()[0] + "\n")
    if detail.submission is None:
        text.append("\npurple's code  ", style="bold cyan")
        text.append(detail.submission_problem + "\n", style="yellow")
    return text


def render_proof(detail: EntryDetail) -> Text:
    text = Text()
    text.append("signature  ", style="bold cyan")
    text.append(detail.signature + "\n")
    text.append("inclusion  ", style="bold cyan")
    text.append(detail.inclusion + "\n\n")
    text.append("input hashes\n", style="bold cyan")
    for name, digest in sorted(detail.input_hashes.items()):
        text.append(f"  {name}\n", style="dim")
        text.append(f"    {digest}\n")
    return text


def render_dbom(detail: EntryDetail) -> Text:
    return Text(json.dumps(detail.dbom, indent=2, sort_keys=True, default=str))


def render_code(detail: EntryDetail, part: str) -> Syntax | Text:
    """The purple's ``source`` or ``tests`` with Python highlighting, or why they cannot be shown."""
    if detail.submission is None:
        return Text(detail.submission_problem, style="yellow")
    code = detail.submission.source if part == "source" else detail.submission.tests
    if not code.strip():
        return Text("the purple agent sent no tests" if part == "tests" else "the purple agent sent no code",
                    style="dim")
    return Syntax(code, "python", theme=CODE_THEME, line_numbers=True, word_wrap=False)


class EntryView(Static):
    """The summary view (the entry screen's first tab)."""

    DEFAULT_CSS = """
    EntryView { padding: 0 1; }
    """

    def __init__(self, detail: EntryDetail, *, id: str | None = None) -> None:
        super().__init__(render_summary(detail), id=id)
        self.detail = detail
