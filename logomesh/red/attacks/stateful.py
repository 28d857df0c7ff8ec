"""Stateful model-based checks (CWE-840): random call sequences against a reference model of the contract.

An LRU cache against an ordered-dict model, a rate limiter against an exact
sliding window over integer clock readings, a bank against a ledger of
Decimals. The first divergence is the finding, with the call sequence that
led to it.
"""

from __future__ import annotations

from logomesh.red.attacks.base import MISS, Family, Variant, Verdict, with_args
from logomesh.red.context import AttackContext
from logomesh.red.executor import ProbeSpec, Trial

SCENARIOS = {"LRUCache": "lru-cache", "RateLimiter": "rate-limiter", "Bank": "bank-ledger"}
SEEDS = 3


class StatefulFamily(Family):
    name = "stateful-model"
    cwe = "CWE-840"
    severity = "medium"
    rationale = ("medium: ordinary call sequences break the contract's business rule (wrong eviction, "
                 "limits miscounted, money wrong); integrity impact, no special access needed")

    def variants(self, ctx: AttackContext, entry: str) -> list[Variant]:
        if entry not in SCENARIOS or entry not in ctx.features.classes:
            return []
        scenario = SCENARIOS[entry]
        return [
            Variant(
                id=f"sequences-{index}",
                spec=ProbeSpec("model", {"scenario": scenario, "sequences": 20, "steps": 30, "batch": index},
                               timeout_s=4.0),
                reproducer=f"random {entry} call sequences checked against a model of the contract",
                prior=0.45 - 0.05 * index,
                repeatable=True,
            )
            for index in range(SEEDS)
        ]

    def judge(self, variant: Variant, trial: Trial) -> Verdict:
        calls = trial.result.get("divergence") if trial.status == "ok" else None
        if calls:
            return Verdict(True, 1.0, str(calls[-1]).lstrip("# "))
        return MISS

    def shrink(self, variant: Variant, trial: Trial) -> Variant:
        """Replay exactly the sequence that diverged."""
        calls = trial.result.get("divergence") or []
        if not calls:
            return variant
        return with_args(variant, "; ".join(str(c) for c in calls), fixed_seed=trial.result.get("seed", 0))
