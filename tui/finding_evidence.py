"""What the red agent measured for each finding of an entry: the ``red_evidence`` input the ledger keeps.

Evidence (values, counts, seconds) varies between runs, so it is not in the result (``H(Δ)`` must replay); the
battle stores it beside the result as a signed input (``logomesh.battle_record``). The console reads it here,
next to ``ledger_source.py``, which does not carry it yet.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ledger import Ledger

EVIDENCE_INPUT = "red_evidence"


def parse_evidence(raw: bytes | None) -> dict[tuple[str, str], str]:
    """``{(family, summary): evidence}`` from the stored bytes; missing or malformed bytes read as none."""
    if not raw:
        return {}
    try:
        items = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError):
        return {}
    found: dict[tuple[str, str], str] = {}
    for item in items if isinstance(items, list) else []:
        if isinstance(item, Mapping) and item.get("evidence"):
            found[(str(item.get("family", "")), str(item.get("summary", "")))] = str(item["evidence"])
    return found


def evidence_of(home: Path, battle_id: str) -> dict[tuple[str, str], str]:
    """The evidence of each finding of ``battle_id``, keyed by (family, summary); none for an unknown battle."""
    with Ledger.open(home) as led:
        stored = led.get(battle_id)
    return parse_evidence(stored.inputs.get(EVIDENCE_INPUT) if stored is not None else None)


def evidence_for(evidence: Mapping[tuple[str, str], str], finding: Mapping[str, Any]) -> str:
    """The evidence recorded for one finding of the result, or ``""``."""
    return evidence.get((str(finding.get("family", "")), str(finding.get("summary", ""))), "")
