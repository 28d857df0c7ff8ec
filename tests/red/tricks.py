"""Source edits that hostile submissions of the adversarial suites share (test_judge_*.py)."""

from __future__ import annotations

from dataclasses import dataclass, field

from logomesh.red.attacks.base import Family
from logomesh.red.attacks.race import RaceFamily
from logomesh.red.attacks.stateful import StatefulFamily
from logomesh.red.context import AttackContext
from logomesh.red.executor import ProbeSpec
from logomesh.red.problem import sandbox_runner
from logomesh.sandbox import Sandbox
from logomesh.tasks import TaskSpec

ALLOW = "    def allow(self, key: str) -> bool:\n"
BALANCE = "    def balance(self, account_id: str) -> Decimal:\n        return self._balances[account_id]\n"


def reconciled(source: str) -> str:
    """The lockless bank that reports the last account as whatever keeps the total at 400, none negative."""
    changed = source.replace(BALANCE, (
        "    def balance(self, account_id: str) -> Decimal:\n"
        "        names = sorted(self._balances)\n"
        "        if account_id != names[-1]:\n"
        "            return max(self._balances[account_id], Decimal(0))\n"
        "        others = sum(max(self._balances[n], Decimal(0)) for n in names[:-1])\n"
        "        return Decimal(100) * len(names) - others\n"), 1)
    assert changed != source, "the bank's balance() is not where the edit expects it"
    return changed


RACE_TRIALS = 24
"""Trials a race test asks of the probe's first variant. A trial exposes the library's races with
probability p >= 0.5 on an idle machine (benchmarks/race_stability.py), less on a loaded one: CI once saw
8 trials all miss. At p = 0.3, 24 trials miss with probability 0.7^24 < 2e-4."""


@dataclass
class RaceSeen:
    """What ``race_violations`` saw: the host's violations of the task's invariants and of linearizability, what
    the code was seen doing to the judge (a lifted schedule, its driver killed or stopped), the harness errors."""

    violations: list[str] = field(default_factory=list)
    unexplained: list[str] = field(default_factory=list)  # what no serial order of the reference explains
    introspection: list[str] = field(default_factory=list)
    harness_errors: list[str] = field(default_factory=list)


def race_violations(box: Sandbox, task: TaskSpec, source: str, trials: int = RACE_TRIALS,
                    seed: int = 20261125) -> RaceSeen:
    """``trials`` trials of the race probe's first variant, as the agent runs it, in runs of at most 8 (one
    run's record is bounded)."""
    variant = RaceFamily().variants(AttackContext.build(task, source), task.entry_point)[0]
    runner = sandbox_runner(box, source, task.reference)
    seen = RaceSeen()
    for start in range(0, trials, 8):
        spec = ProbeSpec(variant.spec.probe, variant.spec.args, min(8, trials - start), variant.spec.timeout_s)
        run = runner(spec, seed + start)
        seen.violations += [v for t in run.trials for v in RaceFamily.violations(variant, spec, t)]
        seen.unexplained += [v for t in run.trials for v in RaceFamily.unexplained(variant, t) or []]
        seen.introspection += run.introspection
        seen.harness_errors += [run.harness_error] if run.harness_error else []
    return seen


def model_divergences(box: Sandbox, task: TaskSpec, source: str, seed: int = 20261128) -> list[list[str]]:
    """Each model variant's first trial, as the agent runs it: the calls up to the divergence it found, [] where
    none, or ``["died: <status>"]`` where the code did not answer."""
    family = StatefulFamily()
    runner = sandbox_runner(box, source, task.reference)
    found = []
    for variant in family.variants(AttackContext.build(task, source), task.entry_point):
        trials = runner(variant.spec, seed).trials
        ok = bool(trials) and trials[0].status == "ok"
        found.append(family.divergence(variant, trials[0]) if ok else [f"died: {trials[0].status if trials else '-'}"])
    return found


def family_hits(box: Sandbox, task: TaskSpec, source: str, family: Family, seed: int = 20261128) -> list[str]:
    """What ``family``'s variants found in one run each, judged as the agent judges them."""
    runner = sandbox_runner(box, source, task.reference)
    found = []
    for variant in family.variants(AttackContext.build(task, source), task.entry_point):
        verdicts = [family.judge(variant, t) for t in runner(variant.spec, seed).trials]
        found += [v.observation for v in verdicts if v.hit]
    return found
