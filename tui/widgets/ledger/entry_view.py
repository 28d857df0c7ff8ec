"""One ledger entry in full: a summary first, then the purple's code and tests, the proof, the DBOM."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from rich.syntax import Syntax
from rich.text import Text
from textual.widgets import Static

from tui.findings import SEVERITY_STYLE, findings_of
from tui.ledger_source import EntryDetail, evidence_for

COMPONENT_KEYS = (("R", "rationale", "rationale_score"), ("A", "architecture", "architecture_score"),
                  ("T", "testing", "testing_score"), ("L", "logic", "logic_score"))
CODE_THEME = "monokai"


REPRODUCER_CHARS = 160  # of a finding's reproducer in the summary; the full one is in the DBOM tab


def _number(result: Mapping[str, Any], key: str) -> float | None:
    value = result.get(key)
    return float(value) if isinstance(value, int | float) else None


def _suite(result: Mapping[str, Any], name: str) -> str:
    counts = result.get("tests", {}).get(name) if isinstance(result.get("tests"), dict) else None
    if not isinstance(counts, dict) or not counts.get("total"):
        return f"{name} tests: none run"
    return f"{name} tests {counts.get('passed', 0)}/{counts.get('total', 0)} passed"


def render_summary(detail: EntryDetail) -> Text:
    """The verdict at a glance: CIS, its components and arithmetic, the findings (with what reproduces them and
    what the red agent measured), the failure reason."""
    row, parsed = detail.row, detail.result
    result = parsed.scores if parsed is not None else {}
    text = Text()
    text.append(f"entry #{row.sequence}  {row.battle_id}\n", style="bold")
    status_style = "bold green" if row.status == "scored" else "bold red"
    text.append(row.status, style=status_style)
    text.append(f"  CIS {row.cis:.3f}  task {row.task_id}  purple {row.purple}  {row.timestamp}\n\n")
    if row.status != "scored" and parsed is not None and parsed.ending.reason:
        text.append("failure  ", style="bold red")
        text.append(f"at {parsed.ending.stage or '?'}: {parsed.ending.reason}\n\n")
    for letter, name, key in COMPONENT_KEYS:
        value = _number(result, key)
        text.append(f"{letter} {name:<13}", style="bold")
        text.append(f"{value:.3f}\n" if value is not None else "—\n")
    raw, red, intent = _number(result, "cis_raw"), _number(result, "red_penalty_applied"), _number(result,
                                                                                                    "intent_penalty")
    behaviour = _number(result, "behaviour_penalty")  # absent from entries scored before it existed
    if raw is not None:
        text.append(f"raw {raw:.3f}", style="bold")
        text.append(f" × (1 − red {red or 0.0:.3f}) × intent {intent if intent is not None else 1.0:.3f}")
        if behaviour is not None:
            text.append(f" × behaviour {behaviour:.3f}")
        within, band = _number(result, "cis_within_band"), result.get("band")  # absent before the band existed
        if within is not None and isinstance(band, dict) and isinstance(band.get("boundary"), int | float):
            boundary = float(band["boundary"])
            text.append(f" = x {within:.3f}\n", style="bold")
            if band.get("all_hidden_passed") is True:
                text.append(f"all hidden tests passed: CIS = {boundary:g} + {1.0 - boundary:g}×x")
            else:
                text.append(f"not all hidden tests passed: CIS = {boundary:g}×x")
            text.append(f" = {row.cis:.3f}\n", style="bold")
        else:
            text.append(f" = CIS {row.cis:.3f}\n", style="bold")
    text.append(f"{_suite(result, 'hidden')} · {_suite(result, 'purple')}\n\n")
    findings = findings_of(result)
    text.append(f"findings ({len(findings)})\n", style="bold cyan")
    if not findings:
        text.append("  none confirmed\n", style="dim")
    for finding in findings:
        severity = str(finding.get("severity", "?"))
        text.append("  ⚑ ")
        text.append(f"{severity:<8}", style=SEVERITY_STYLE.get(severity, "red"))
        text.append(f" {finding.get('family', '?')}  {finding.get('cwe', '')}\n")
        text.append(f"      {finding.get('summary', '')}\n", style="dim")
        reproducer = " ".join(str(finding.get("reproducer", "")).split())
        if reproducer:  # what the red agent ran to show it, as the result records it
            text.append("      reproduce: ", style="bold")
            text.append(f"{reproducer[:REPRODUCER_CHARS]}{'…' if len(reproducer) > REPRODUCER_CHARS else ''}\n")
        measured = " ".join(evidence_for(detail.evidence, finding).split())
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
