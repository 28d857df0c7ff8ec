"""Calibration: does the CIS order every task's labelled submissions the way the labels say?

For each task: the good submission must not take the intent penalty and must
outscore each other labelled one; off-intent code, meaning a valid program for
a different task (the good submission of every other task in the library),
must take the intent penalty and stay below the good one; and the task's
description pasted into a docstring above a flawed submission must not beat
the good one. ``humaneval_intent.py`` runs the same intent check on code the
library has never seen.

The library's own ``off-intent`` submissions are same-API reinterpretations of
the task (a TTL cache named ``LRUCache``); their embeddings are as close to the
intent as the good code's, so they are held to "below good" (T catches them)
and the table shows whether the intent penalty also applied.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from logomesh.scoring.cis import ScoreCard, score_submission
from logomesh.scoring.config import DEFAULT_CONFIG, ScoringConfig
from logomesh.scoring.measure import measure
from logomesh.scoring.testing import flawed_variants
from logomesh.submission import Submission

if TYPE_CHECKING:
    from logomesh.sandbox import Sandbox
    from logomesh.tasks import TaskSpec

GOOD = "good"
OFF_INTENT = "off-intent"


@dataclass(frozen=True)
class Row:
    task_id: str
    name: str  # submission name, "cross:<other task>" or "pasted-docstring"
    label: str
    fields: dict[str, Any]
    checks: tuple[tuple[str, bool], ...]

    @property
    def ok(self) -> bool:
        return all(passed for _, passed in self.checks)

    def to_json(self) -> dict[str, Any]:
        keys = ("rationale_score", "architecture_score", "testing_score", "logic_score", "red_penalty_applied",
                "intent_penalty", "cis_score")
        return {"task_id": self.task_id, "name": self.name, "label": self.label,
                **{k: self.fields[k] for k in keys}, "checks": [{"check": c, "ok": ok} for c, ok in self.checks],
                "ok": self.ok}


@dataclass
class Report:
    rows: list[Row] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return all(row.ok for row in self.rows)

    def failures(self) -> list[str]:
        return [f"{row.task_id}/{row.name}: {check}" for row in self.rows for check, ok in row.checks if not ok]


def pasted_source(task: TaskSpec, wrong_code: str) -> str:
    """The task description pasted into a module docstring above ``wrong_code``."""
    text = task.description.replace('"""', "'''")
    return f'"""\n{text}\n"""\n\n{wrong_code}'


Scorer = Callable[["TaskSpec", Submission], ScoreCard]


def sandbox_scorer(box: Sandbox, *, red: bool, red_budget_s: float, seed: int,
                   config: ScoringConfig = DEFAULT_CONFIG) -> Scorer:
    """A scorer that measures each submission in ``box`` (and with the red agent if ``red``)."""
    variants: dict[str, dict[str, str]] = {}

    def score(task: TaskSpec, submission: Submission) -> ScoreCard:
        if task.id not in variants:
            variants[task.id] = flawed_variants(task)
        facts = measure(task, submission, box, red=red, red_budget_s=red_budget_s, seed=seed,
                        variants=variants[task.id])
        return score_submission(task, submission, facts.hidden, facts.purple, facts.findings, config=config,
                                mutants=facts.mutants, red=facts.red)

    return score


def calibrate_task(task: TaskSpec, others: Sequence[TaskSpec], scorer: Scorer) -> list[Row]:
    names = task.submission_names()
    if GOOD not in names:
        return [Row(task.id, GOOD, GOOD, {}, (("task has a good submission", False),))]
    labelled = {name: task.labelled_submission(name) for name in names}
    cards = {name: scorer(task, item.submission).result_fields() for name, item in labelled.items()}
    good = cards[GOOD]["cis_score"]
    rows = [Row(task.id, GOOD, GOOD, cards[GOOD], (("no intent penalty", cards[GOOD]["intent_penalty"] == 1.0),))]
    for name in names:
        if name == GOOD:
            continue
        checks = ((f"below good ({good})", cards[name]["cis_score"] < good),)
        rows.append(Row(task.id, name, labelled[name].label, cards[name], checks))
    for other_task in others:
        if GOOD not in other_task.submission_names():
            continue
        fields = scorer(task, other_task.labelled_submission(GOOD).submission).result_fields()
        rows.append(Row(task.id, f"cross:{other_task.id}", OFF_INTENT, fields,
                        (("takes the intent penalty", fields["intent_penalty"] < 1.0),
                         (f"below good ({good})", fields["cis_score"] < good))))
    wrong = [n for n in names if labelled[n].behaviour_defect and labelled[n].label != OFF_INTENT]
    if wrong:
        base = labelled[wrong[0]].submission
        pasted = Submission(pasted_source(task, base.source), base.tests, base.rationale)
        fields = scorer(task, pasted).result_fields()
        rows.append(Row(task.id, "pasted-docstring", f"description above {wrong[0]}", fields,
                        ((f"does not beat good ({good})", fields["cis_score"] < good),)))
    return rows


def calibrate(
    tasks: Sequence[TaskSpec],
    scorer: Scorer,
    progress: Callable[[str], None] | None = None,
    library: Sequence[TaskSpec] | None = None,
) -> Report:
    """Calibrate ``tasks``; off-intent code comes from every other task of ``library`` (default: ``tasks``)."""
    report = Report()
    pool = list(library if library is not None else tasks)
    for task in tasks:
        if progress:
            progress(task.id)
        report.rows.extend(calibrate_task(task, [t for t in pool if t.id != task.id], scorer))
    return report


def table(report: Report) -> str:
    header = f"{'task':<22} {'submission':<26} {'R':>6} {'A':>6} {'T':>6} {'L':>6} {'red':>6} {'int':>6} {'CIS':>6}  ok"
    lines = [header, "-" * len(header)]
    for row in report.rows:
        f = row.fields
        if not f:
            lines.append(f"{row.task_id:<22} {row.name:<26} {'':>48}  {'FAIL'}")
            continue
        values = " ".join(f"{f[k]:>6.3f}" for k in ("rationale_score", "architecture_score", "testing_score",
                                                     "logic_score", "red_penalty_applied", "intent_penalty",
                                                     "cis_score"))
        mark = "-" if not row.checks else ("ok" if row.ok else "FAIL")
        lines.append(f"{row.task_id:<22} {row.name[:26]:<26} {values}  {mark}")
    failures = report.failures()
    lines.append("")
    lines.append("all checks passed" if not failures else f"{len(failures)} check(s) failed:")
    lines += [f"  {failure}" for failure in failures]
    return "\n".join(lines)
