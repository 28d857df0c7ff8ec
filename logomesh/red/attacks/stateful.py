"""Stateful model-based checks (CWE-840): random call sequences against a reference model of the contract.

The model is the task's own (``[red.model]`` in its task.toml, ``model()`` in
its red.py; ``docs/tasks.md``): a cache against an ordered dict, a limiter
against an exact sliding window, a ledger of Decimals. The first divergence
is the finding, with the call sequence that led to it.
"""

from __future__ import annotations

from logomesh.red.attacks.base import MISS, Family, Variant, Verdict, with_args
from logomesh.red.context import AttackContext
from logomesh.red.executor import TASK_MODULE, ProbeSpec, Trial

SEEDS = 3


class StatefulFamily(Family):
    name = "stateful-model"
    cwe = "CWE-840"
    severity = "medium"
    rationale = ("medium: ordinary call sequences break the contract's business rule (wrong eviction, "
                 "limits miscounted, money wrong); integrity impact, no special access needed")

    def variants(self, ctx: AttackContext, entry: str) -> list[Variant]:
        scenario = ctx.red.scenario("model", entry)
        if scenario is None or not ctx.defines(entry):
            return []
        args = {TASK_MODULE: ctx.red.module, "sequences": 20, "steps": 30, **scenario.args}
        return [
            Variant(
                id=f"sequences-{index}",
                spec=ProbeSpec("model", {**args, "batch": index}, timeout_s=4.0),
                reproducer=scenario.story or f"random {entry} call sequences checked against a model of the contract",
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
