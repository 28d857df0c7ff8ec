"""The red agent's confirmed findings as a battle result records them (``red_analysis.vulnerabilities``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from logomesh.findings import SEVERITY_ORDER

SEVERITY_STYLE = {"low": "yellow", "medium": "dark_orange", "high": "red", "critical": "bold red reverse"}


def findings_of(result: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The recorded findings of one result; a malformed or missing list reads as none."""
    analysis = result.get("red_analysis")
    found = analysis.get("vulnerabilities") if isinstance(analysis, Mapping) else None
    return [f for f in found if isinstance(f, Mapping)] if isinstance(found, list) else []


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


def finding_rows(battles: Sequence[tuple[str, str, str, int, Mapping[str, Any]]]) -> list[FindingRow]:
    """Every finding of ``(battle_id, agent, task_id, repeat, result)``, worst first, then by task, agent, repeat."""
    rows = [
        FindingRow(str(f.get("severity", "?")), str(f.get("family", "?")), str(f.get("cwe", "")), task_id, agent,
                   repeat, battle_id, " ".join(str(f.get("summary", "")).split()),
                   " ".join(str(f.get("reproducer", "")).split()))
        for battle_id, agent, task_id, repeat, result in battles
        for f in findings_of(result)
    ]
    return sorted(rows, key=lambda r: (-severity_rank(r.severity), r.task_id, r.agent, r.repeat, r.family))
