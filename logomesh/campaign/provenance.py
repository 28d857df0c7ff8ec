"""Where a campaign report comes from: the signed checkpoint it was computed under, and what the battles ran with.

Everything here but the LogoMesh version is read from the signed ledger entries
(their attributes and input digests) and the plan, so ``verify report`` can
recompute it.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ledger import Ledger
from ledger.canonical import canonicalize
from logomesh import __version__
from logomesh.campaign.aggregate import build_report
from logomesh.campaign.model import BattleRow, CampaignReport, Provenance
from logomesh.campaign.plan import CampaignPlan
from logomesh.campaign.reading import rows_from_ledger
from logomesh.campaign.runner import campaign_battles

TASK_INPUTS = ("task_spec", "hidden_tests", "reference_solution", "flawed_variants", "red_module")
"""The inputs of an entry that are the task as judged (``battle/record.py::task_inputs``)."""


@dataclass(frozen=True)
class Checkpoint:
    size: int
    root: str
    note: str
    timestamp: str


def task_inputs(rows: Sequence[BattleRow]) -> dict[str, str]:
    """Task id -> SHA-256 of the canonical JSON of its task inputs' digests; differing entries are all listed."""
    seen: dict[str, set[str]] = {}
    for row in rows:
        digests = {name: row.input_digests[name] for name in TASK_INPUTS if name in row.input_digests}
        if digests:
            seen.setdefault(row.task_id, set()).add(hashlib.sha256(canonicalize(digests)).hexdigest())
    return {task: ",".join(sorted(found)) for task, found in sorted(seen.items())}


def provenance(plan: CampaignPlan, rows: Sequence[BattleRow], checkpoint: Checkpoint | None) -> Provenance:
    tasks = task_inputs(rows)
    configs = sorted({row.attributes["scorer_config_sha256"] for row in rows
                      if "scorer_config_sha256" in row.attributes})
    return Provenance(
        logomesh_version=__version__, campaign_seed=plan.seed, red_enabled=plan.settings.red,
        red_budget_s=plan.settings.red_budget_s if plan.settings.red else 0.0, sandbox=plan.settings.sandbox,
        scoring_config_sha256=configs,
        task_library_sha256=hashlib.sha256(canonicalize(tasks)).hexdigest() if tasks else None,
        task_inputs=tasks,
        checkpoint_size=None if checkpoint is None else checkpoint.size,
        checkpoint_root=None if checkpoint is None else checkpoint.root,
        checkpoint_note=None if checkpoint is None else checkpoint.note,
        checkpoint_time=None if checkpoint is None else checkpoint.timestamp,
    )


def latest_checkpoint(home: Path) -> Checkpoint | None:
    with Ledger.open(home) as led:
        record = led.latest_checkpoint()
    return None if record is None else Checkpoint(record.size, record.root.hex(), record.note, record.timestamp)


def report_at(home: Path, plan: CampaignPlan, checkpoint: Checkpoint | None) -> CampaignReport:
    """The campaign's report over the entries under ``checkpoint`` (none: an empty ledger)."""
    size = 0 if checkpoint is None else checkpoint.size
    recorded = [row for row in campaign_battles(home, plan.campaign_id) if row.sequence < size]
    rows = rows_from_ledger(plan, recorded)
    return build_report(plan, rows, provenance(plan, rows, checkpoint))


def load_report(home: Path, plan: CampaignPlan) -> CampaignReport:
    """The campaign's report as of the ledger's newest signed checkpoint."""
    return report_at(home, plan, latest_checkpoint(home))
