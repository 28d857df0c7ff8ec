"""The red agent's confirmed findings as a battle result records them (``red_analysis.vulnerabilities``)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from logomesh.findings import SEVERITY_ORDER, Finding, Severity

SEVERITY_STYLE = {"low": "yellow", "medium": "dark_orange", "high": "red", "critical": "bold red reverse"}


def severity_rank(severity: str) -> int:
    """Higher is worse; an unknown severity ranks below ``low``."""
    return SEVERITY_ORDER.index(severity) if severity in SEVERITY_ORDER else -1


@dataclass(frozen=True)
class FindingRow:
    """One confirmed finding of one campaign battle."""

    severity: str
    family: str
    cwe: str
    task_id: str
    agent: str
    repeat: int
    battle_id: str
    summary: str
    reproducer: str = ""


def finding_rows(battles: Sequence[tuple[str, str, str, int, Sequence[Finding[Severity | None]]]]) -> list[FindingRow]:
    """Every finding of ``(battle_id, agent, task_id, repeat, findings)``, worst first, then by task, agent, repeat."""
    rows = [
        FindingRow(f.severity or "?", f.family or "?", f.cwe, task_id, agent, repeat, battle_id,
                   " ".join(f.summary.split()), " ".join(f.reproducer.split()))
        for battle_id, agent, task_id, repeat, findings in battles
        for f in findings
    ]
    return sorted(rows, key=lambda r: (-severity_rank(r.severity), r.task_id, r.agent, r.repeat, r.family))
