"""The red agent's confirmed findings as a battle result records them (``red_analysis.vulnerabilities``)."""

from __future__ import annotations

from collections.abc import Sequence

from logomesh.campaign.model import BattleFinding, BattleRow
from logomesh.campaign.reading import findings_of
from logomesh.findings import SEVERITY_ORDER

SEVERITY_STYLE = {"low": "yellow", "medium": "dark_orange", "high": "red", "critical": "bold red reverse"}


def severity_rank(severity: str | None) -> int:
    """Higher is worse; an unknown severity (``None`` when the entry names none of the four) ranks below ``low``."""
    return SEVERITY_ORDER.index(severity) if severity in SEVERITY_ORDER else -1


def finding_rows(rows: Sequence[BattleRow]) -> list[BattleFinding]:
    """Every finding of the campaign's battles, worst first, then by task, agent, repeat and family as shown."""
    found = [finding for row in rows for finding in findings_of(row)]
    return sorted(found, key=lambda f: (-severity_rank(f.finding.severity), f.task_id, f.agent, f.repeat,
                                        f.finding.family or "?"))
