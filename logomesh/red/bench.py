"""The red benchmark: recall on labelled flawed variants, false positives on correct code, speed versus baselines.

Every task's labelled submissions (and its reference solution) are attacked
by the MCTS agent and by the uniform-random and round-robin baselines under
the same budget, in the same sandbox, in the same run. A flawed variant is
*recalled* when a finding of the family its label names is confirmed.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from logomesh.context import BattleContext
from logomesh.findings import SEVERITY_ORDER, Finding
from logomesh.red.agent import STRATEGIES, RedReport, Strategy, attack
from logomesh.sandbox.base import Sandbox
from logomesh.tasks import TaskSpec

# label -> the finding families that count as catching it
EXPECTED: dict[str, tuple[str, ...]] = {
    "race": ("race",),
    "injection": ("sql-injection", "code-injection"),
    "traversal": ("path-traversal",),
    "redos": ("complexity",),
    "unbounded-growth": ("resource-growth",),
}
CORRECT_LABELS = ("good",)
SERIOUS = SEVERITY_ORDER.index("medium")


@dataclass(frozen=True)
class Case:
    task: str
    name: str  # submission name, or "reference"
    label: str
    source: str


@dataclass
class Outcome:
    case: Case
    strategy: str
    findings: tuple[Finding, ...]
    first_finding_s: float | None
    elapsed_s: float

    @property
    def recalled(self) -> bool:
        wanted = EXPECTED.get(self.case.label, ())
        return any(f.family in wanted for f in self.findings)

    @property
    def serious(self) -> list[Finding]:
        return [f for f in self.findings if SEVERITY_ORDER.index(f.severity) >= SERIOUS]


@dataclass
class BenchResult:
    budget_s: float
    outcomes: list[Outcome] = field(default_factory=list)
    deterministic: dict[str, bool] = field(default_factory=dict)  # case key -> identical findings over runs

    def summary(self) -> dict[str, Any]:
        out: dict[str, Any] = {"budget_s": self.budget_s, "strategies": {}}
        for strategy in sorted({o.strategy for o in self.outcomes}):
            mine = [o for o in self.outcomes if o.strategy == strategy]
            flawed = [o for o in mine if o.case.label in EXPECTED]
            correct = [o for o in mine if o.case.label in CORRECT_LABELS]
            per_label: dict[str, dict[str, int]] = {}
            for o in flawed:
                slot = per_label.setdefault(o.case.label, {"found": 0, "total": 0})
                slot["total"] += 1
                slot["found"] += int(o.recalled)
            times = sorted(o.first_finding_s for o in flawed if o.recalled and o.first_finding_s is not None)
            out["strategies"][strategy] = {
                "recall": _ratio(sum(o.recalled for o in flawed), len(flawed)),
                "recall_by_label": per_label,
                "flawed": len(flawed),
                "missed": sorted(f"{o.case.task}:{o.case.name}" for o in flawed if not o.recalled),
                "false_positives_medium_plus": sorted(
                    f"{o.case.task}:{o.case.name}:{f.family}:{f.severity}" for o in correct for f in o.serious
                ),
                "correct_cases": len(correct),
                "low_findings_on_correct": sum(len(o.findings) - len(o.serious) for o in correct),
                "first_finding_median_s": _round(statistics.median(times)) if times else None,
                "first_finding_p90_s": _round(_percentile(times, 0.9)) if times else None,
                "total_s": _round(sum(o.elapsed_s for o in mine)),
            }
        out["cases"] = [
            {"case": f"{o.case.task}:{o.case.name}", "label": o.case.label, "strategy": o.strategy,
             "families": sorted({f.family for f in o.findings}), "first_finding_s": o.first_finding_s,
             "elapsed_s": _round(o.elapsed_s)}
            for o in self.outcomes
        ]
        if self.deterministic:
            out["determinism"] = {"cases": len(self.deterministic),
                                  "identical": sum(self.deterministic.values()),
                                  "differing": sorted(k for k, v in self.deterministic.items() if not v)}
        return out


def cases_of(tasks: Iterable[TaskSpec]) -> list[Case]:
    out: list[Case] = []
    for task in tasks:
        for name in task.submission_names():
            labelled = task.labelled_submission(name)
            out.append(Case(task.id, name, labelled.label, labelled.submission.source))
        reference = task.root / "reference" / "solution.py"
        if reference.is_file():
            out.append(Case(task.id, "reference", "good", reference.read_text(encoding="utf-8")))
    return out


def signature(findings: tuple[Finding, ...]) -> list[tuple[str, str, str, str]]:
    """What must be identical between runs: the findings themselves, not their timing-dependent counts."""
    return sorted((f.family, f.cwe, f.severity, f.reproducer) for f in findings)


def run_bench(
    box: Sandbox,
    tasks: Iterable[TaskSpec],
    *,
    budget_s: float = 20.0,
    seed: int = 0,
    strategies: tuple[Strategy, ...] = STRATEGIES,
    determinism_runs: int = 3,
    progress: Callable[[str], None] | None = None,
) -> BenchResult:
    task_list = list(tasks)
    by_id = {t.id: t for t in task_list}
    result = BenchResult(budget_s)
    battle = BattleContext(seed=seed)
    for case in cases_of(task_list):
        task = by_id[case.task]
        first: RedReport | None = None
        for strategy in strategies:
            report = attack(task, case.source, box, battle, budget_s=budget_s, strategy=strategy)
            if strategy == "mcts":
                first = report
            outcome = Outcome(case, strategy, report.findings, report.stats.first_finding_s,
                              report.stats.elapsed_s)
            result.outcomes.append(outcome)
            if progress is not None:
                families = ",".join(sorted({f.family for f in report.findings})) or "-"
                progress(f"{case.task}:{case.name} [{case.label}] {strategy}: {families} "
                         f"in {outcome.elapsed_s:.1f}s")
        if determinism_runs > 1 and "mcts" in strategies and first is not None:
            baseline = signature(first.findings)
            same = all(
                signature(attack(task, case.source, box, battle, budget_s=budget_s).findings) == baseline
                for _ in range(determinism_runs - 1)
            )
            result.deterministic[f"{case.task}:{case.name}"] = same
    return result


def _ratio(found: int, total: int) -> float | None:
    return round(found / total, 4) if total else None


def _round(value: float) -> float:
    return round(value, 3)


def _percentile(values: list[float], q: float) -> float:
    index = min(len(values) - 1, max(0, round(q * (len(values) - 1))))
    return values[index]
