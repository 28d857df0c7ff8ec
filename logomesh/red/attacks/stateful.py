"""Stateful model-based checks (CWE-840): random call sequences against a reference model of the contract.

The model is the task's own (``[red.model]`` in its task.toml, ``model()`` in
its red.py; ``docs/tasks.md``): a cache against an ordered dict, a limiter
against an exact sliding window, a ledger of Decimals. The first divergence
is the finding, with the call sequence that led to it.
"""

from __future__ import annotations

from logomesh import untrusted
from logomesh.findings import MODEL
from logomesh.red.attacks.base import DIED, MISS, Family, Variant, Verdict, with_args
from logomesh.red.context import AttackContext
from logomesh.red.executor import TASK_MODULE, ProbeSpec, Trial

SEEDS = 3


class StatefulFamily(Family):
    name = MODEL
    cwe = "CWE-840"
    severity = "medium"
    rationale = ("medium: ordinary call sequences break the contract's business rule (wrong eviction, "
                 "limits miscounted, money wrong); integrity impact, no special access needed")
    probe = "model"
    markers = ("sequences", "steps", "divergence", "observed", "seed")

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
                oracle=ctx.red.oracle("model"),
            )
            for index in range(SEEDS)
        ]

    def judge(self, variant: Variant, trial: Trial) -> Verdict:
        if trial.status in DIED:
            return Verdict(True, 1.0, f"the code did not survive the model probe ({trial.status})")
        calls = self.divergence(variant, trial) if trial.status == "ok" else []
        if calls:
            return Verdict(True, 1.0, str(calls[-1]).lstrip("# "))
        return MISS

    @staticmethod
    def divergence(variant: Variant, trial: Trial) -> list[str]:
        """The calls up to the first divergence from the model: found here, by the task's ``check_model``, in
        what the scenario recorded; or as a scenario that judges itself reported it from the box. A record
        without what it must hold (the scenario always writes it) is a divergence, never a clean trial."""
        try:
            if variant.oracle is None:
                return [str(c)[:200] for c in untrusted.items(trial.result, "divergence")]
            records = untrusted.objects(trial.result, "observed")
        except untrusted.Malformed as exc:
            return [f"# the model scenario's record is malformed ({exc})"[:200]]
        args = {k: v for k, v in variant.spec.args.items() if k != TASK_MODULE}
        for record in records:
            try:
                calls = [str(c) for c in variant.oracle(args, record)]
            except Exception as exc:  # a record the scenario could not have written: the code rewrote it
                return [f"# the model scenario's record is malformed ({type(exc).__name__}: {exc})"[:200]]
            if calls:
                return calls[-40:]
        return []

    def shrink(self, variant: Variant, trial: Trial) -> Variant:
        """Replay exactly the sequence that diverged (a record without its seed cannot be replayed)."""
        calls = self.divergence(variant, trial)
        try:
            seed = untrusted.integer(trial.result, "seed")
        except untrusted.Malformed:
            return variant
        return with_args(variant, "; ".join(str(c) for c in calls), fixed_seed=seed) if calls else variant
