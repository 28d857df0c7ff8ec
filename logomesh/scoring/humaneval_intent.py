"""The intent check on code the library has never seen: HumanEval's 164 canonical solutions.

Each solution (prompt plus canonical body, prose removed as for any submission)
is judged against its own prompt, which must not penalise it, and against each
of the 163 other prompts (26,732 cross pairs), which should. The reference set
is the one a battle would use, the task library plus the 164 prompts; when the
solution is judged against prompt j, prompt j is the intent, so it and its
restatements (``intent.py``) leave the distractors, while the solution's own
prompt stays among them. No sandbox is needed: the check reads only embeddings.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from logomesh.scoring.config import ScoringConfig
from logomesh.scoring.humaneval import problems
from logomesh.scoring.intent import IntentCheck, judge
from logomesh.scoring.reference import build, distractor_entries, task_entries

if TYPE_CHECKING:
    from logomesh.tasks import TaskSpec

CROSS_SHARE = 0.99  # the bar: at least 99 % of the cross pairs penalised


@dataclass(frozen=True)
class HumanEvalIntent:
    solutions: int
    own_penalised: tuple[str, ...]  # task ids whose solution took the penalty against its own prompt
    cross_total: int
    cross_penalised: int
    cross_missed: tuple[tuple[str, str], ...]  # (solution, prompt) pairs without the penalty
    own_r_min: float
    own_margin_min: float
    cross_r_max: float

    @property
    def checks(self) -> tuple[tuple[str, bool], ...]:
        share = self.cross_penalised / self.cross_total if self.cross_total else 0.0
        return ((f"0 of {self.solutions} penalised against their own prompt", not self.own_penalised),
                (f"at least {CROSS_SHARE:.0%} of {self.cross_total} cross pairs penalised", share >= CROSS_SHARE))

    @property
    def ok(self) -> bool:
        return all(passed for _, passed in self.checks)

    def to_json(self) -> dict[str, Any]:
        return {"solutions": self.solutions, "own_penalised": list(self.own_penalised),
                "cross_total": self.cross_total, "cross_penalised": self.cross_penalised,
                "cross_missed": [list(pair) for pair in self.cross_missed],
                "own_r_min": round(self.own_r_min, 4), "own_margin_min": round(self.own_margin_min, 4),
                "cross_r_max": round(self.cross_r_max, 4),
                "checks": [{"check": c, "ok": ok} for c, ok in self.checks], "ok": self.ok}


def evaluate(library: Sequence[TaskSpec], config: ScoringConfig) -> HumanEvalIntent:
    from logomesh.scoring.prose import defined_names
    from logomesh.scoring.rationale import code_text, embed

    items = problems()
    reference = build(task_entries(library), distractor_entries(config), config=config)
    row = {key: index for index, key in enumerate(reference.keys)}
    prompts = [reference.matrix[row[p.task_id]] for p in items]
    texts = [code_text(p.solution) for p in items]
    codes = [embed(text, config)[0] for text in texts]
    names = [defined_names(text) for text in texts]

    def check(i: int, j: int) -> IntentCheck:
        r = min(1.0, max(0.0, float(np.dot(codes[i], prompts[j]))))
        return judge(codes[i], items[j].prompt, items[j].entry_point, prompts[j], reference, r, config, names[i])

    own = [check(i, i) for i in range(len(items))]
    missed: list[tuple[str, str]] = []
    cross_r = -1.0
    total = 0
    for i in range(len(items)):
        for j in range(len(items)):
            if i == j:
                continue
            result = check(i, j)
            total += 1
            cross_r = max(cross_r, result.own)
            if result.penalty >= 1.0:
                missed.append((items[i].task_id, items[j].task_id))
    return HumanEvalIntent(
        solutions=len(items), own_penalised=tuple(p.task_id for p, c in zip(items, own, strict=True) if c.penalty < 1),
        cross_total=total, cross_penalised=total - len(missed), cross_missed=tuple(missed),
        own_r_min=min(c.own for c in own), own_margin_min=min(c.margin for c in own), cross_r_max=cross_r,
    )  # fmt: skip


def summary(report: HumanEvalIntent) -> str:
    lines = [f"HumanEval intent check ({report.solutions} canonical solutions, prose removed; reference: the task "
             f"library + {report.solutions} prompts)",
             f"  own prompt:   {len(report.own_penalised)} of {report.solutions} penalised"
             f"  (R >= {report.own_r_min:.3f}, margin >= {report.own_margin_min:.4f})",
             f"  cross pairs:  {report.cross_penalised} of {report.cross_total} penalised"
             f" ({report.cross_penalised / max(1, report.cross_total):.2%}; cross R up to {report.cross_r_max:.3f})"]
    if report.cross_missed:
        lines.append("  not penalised (same entry point or restated intent): "
                     + ", ".join(f"{a} vs {b}" for a, b in report.cross_missed))
    lines += [f"  {'ok  ' if ok else 'FAIL'} {check}" for check, ok in report.checks]
    return "\n".join(lines)
