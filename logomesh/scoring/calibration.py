"""Calibration: does the CIS order every task's labelled submissions the way the labels say?

For each task: the good submission must not take the intent penalty and must
outscore each other labelled one; the task's reference solution (correct code
nobody wrote to please the intent check) must not take it either; off-intent
code, meaning a valid program for a different task (the good submission of
every other task in the library), must take the intent penalty and stay below
the good one; and the task's description pasted into a docstring above a
flawed submission must not beat the good one. Code that does not implement
the task — off-intent code, the good source made unparsable, the good source
that exits before any test can run — must rank below every labelled
submission that implements it (every label but off-intent).
``humaneval_intent.py`` runs the same intent check on code the library has
never seen.

The library's own ``off-intent`` submissions are same-API reinterpretations of
the task (a TTL cache named ``LRUCache``); their embeddings are as close to the
intent as the good code's, so they are held to "below good" (T catches them)
and the table shows whether the intent penalty also applied.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import nullcontext
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from logomesh.context import BattleContext
from logomesh.scoring.cis import ScoreCard, rounded
from logomesh.scoring.config import DEFAULT_CONFIG, ScoringConfig
from logomesh.scoring.pipeline import Judging, measure_and_score
from logomesh.submission import Submission
from logomesh.syntax import PARSE_ERRORS, parse

if TYPE_CHECKING:
    from logomesh.sandbox import Sandbox
    from logomesh.tasks import TaskSpec

GOOD = "good"
REFERENCE = "reference"
OFF_INTENT = "off-intent"
EXIT_AT_IMPORT = "import os\nos._exit(0)\n"


@dataclass(frozen=True)
class Figures:
    """What the checks and the table read of one score card, rounded as the battle result records them."""

    rationale: float
    architecture: float
    testing: float
    logic: float
    red_penalty: float
    intent_penalty: float
    behaviour_penalty: float
    cis_within_band: float
    cis: float

    @classmethod
    def of(cls, card: ScoreCard) -> Figures:
        def r(x: float) -> float:
            return rounded(x, card.config.digits)

        final = card.final
        return cls(r(final["rationale"]), r(final["architecture"]), r(final["testing"]), r(final["logic"]),
                   r(card.red_penalty_applied), r(card.intent_penalty), r(card.behaviour_penalty),
                   r(card.cis_within_band), r(card.cis_score))

    def columns(self) -> tuple[float, ...]:
        """R, A, T, L, then the red, intent and behaviour penalties, then the CIS: the table's columns."""
        return (self.rationale, self.architecture, self.testing, self.logic, self.red_penalty, self.intent_penalty,
                self.behaviour_penalty, self.cis)

    def to_json(self) -> dict[str, float]:
        """The figures under the battle result's keys (``ScoreCard.result_fields``)."""
        return {"rationale_score": self.rationale, "architecture_score": self.architecture,
                "testing_score": self.testing, "logic_score": self.logic, "red_penalty_applied": self.red_penalty,
                "intent_penalty": self.intent_penalty, "behaviour_penalty": self.behaviour_penalty,
                "cis_within_band": self.cis_within_band, "cis_score": self.cis}


@dataclass(frozen=True)
class Row:
    task_id: str
    name: str  # submission name, "cross:<other task>" or "pasted-docstring"
    label: str
    figures: Figures | None  # None when the task could not be scored (it has no good submission)
    checks: tuple[tuple[str, bool], ...]

    @property
    def ok(self) -> bool:
        return all(passed for _, passed in self.checks)

    def to_json(self) -> dict[str, Any]:
        figures = self.figures.to_json() if self.figures is not None else {}
        return {"task_id": self.task_id, "name": self.name, "label": self.label, **figures,
                "checks": [{"check": c, "ok": ok} for c, ok in self.checks], "ok": self.ok}


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
            variants[task.id] = task.flawed_variants()
        judging = Judging(red=red, red_budget_s=red_budget_s, config=config, variants=variants[task.id])
        return measure_and_score(task, submission, nullcontext(box), judging, BattleContext(seed=seed)).card

    return score


def unparsable_source(source: str) -> str:
    """``source`` with the colon of its first ``def`` or ``class`` header removed: one typo, no longer Python."""
    lines = source.splitlines()
    for index, line in enumerate(lines):
        stripped = line.rstrip()
        if stripped.lstrip().startswith(("def ", "class ")) and stripped.endswith(":"):
            lines[index] = stripped[:-1]
            break
    broken = "\n".join(lines) + "\n"
    try:
        parse(broken)
    except PARSE_ERRORS:
        return broken
    return broken + "(\n"  # no such header: an unclosed bracket


def never_ran_source(source: str) -> str:
    """``source`` after a statement that ends the process at import: nothing in it can ever be observed."""
    return EXIT_AT_IMPORT + source


def calibrate_task(task: TaskSpec, others: Sequence[TaskSpec], scorer: Scorer) -> list[Row]:
    names = task.submission_names()
    if GOOD not in names:
        return [Row(task.id, GOOD, GOOD, None, (("task has a good submission", False),))]

    def figures(submission: Submission) -> Figures:
        return Figures.of(scorer(task, submission))

    labelled = {name: task.labelled_submission(name) for name in names}
    cards = {name: figures(item.submission) for name, item in labelled.items()}
    good = cards[GOOD].cis
    implementing = [name for name in names if labelled[name].label != OFF_INTENT]
    floor_name = min(implementing, key=lambda name: cards[name].cis)
    floor = cards[floor_name].cis
    below_every = f"below every implementation ({floor_name} {floor})"
    rows = [Row(task.id, GOOD, GOOD, cards[GOOD], (("no intent penalty", cards[GOOD].intent_penalty == 1.0),))]
    reference = figures(Submission(task.reference_bytes.decode("utf-8"), "", ""))
    rows.append(Row(task.id, REFERENCE, "the judge's reference solution", reference,
                    (("no intent penalty", reference.intent_penalty == 1.0),)))
    for name in names:
        if name == GOOD:
            continue
        checks = [(f"below good ({good})", cards[name].cis < good)]
        if labelled[name].label == OFF_INTENT:
            checks.append((below_every, cards[name].cis < floor))
        rows.append(Row(task.id, name, labelled[name].label, cards[name], tuple(checks)))
    for other_task in others:
        if GOOD not in other_task.submission_names():
            continue
        cross = figures(other_task.labelled_submission(GOOD).submission)
        rows.append(Row(task.id, f"cross:{other_task.id}", OFF_INTENT, cross,
                        (("takes the intent penalty", cross.intent_penalty < 1.0), (below_every, cross.cis < floor))))
    base = labelled[GOOD].submission
    for name, label, source in (("unparsable", "good, one colon removed", unparsable_source(base.source)),
                                ("never-ran", "good, exits at import", never_ran_source(base.source))):
        broken = figures(Submission(source, base.tests, base.rationale))
        rows.append(Row(task.id, name, label, broken, ((below_every, broken.cis < floor),)))
    wrong = [n for n in names if labelled[n].behaviour_defect and labelled[n].label != OFF_INTENT]
    if wrong:
        flawed = labelled[wrong[0]].submission
        pasted = figures(Submission(pasted_source(task, flawed.source), flawed.tests, flawed.rationale))
        rows.append(Row(task.id, "pasted-docstring", f"description above {wrong[0]}", pasted,
                        ((f"does not beat good ({good})", pasted.cis < good),)))
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
    columns = " ".join(f"{name:>6}" for name in ("R", "A", "T", "L", "red", "int", "beh", "CIS"))
    header = f"{'task':<22} {'submission':<26} {columns}  ok"
    lines = [header, "-" * len(header)]
    for row in report.rows:
        if row.figures is None:
            lines.append(f"{row.task_id:<22} {row.name:<26} {'':>55}  {'FAIL'}")
            continue
        values = " ".join(f"{value:>6.3f}" for value in row.figures.columns())
        mark = "-" if not row.checks else ("ok" if row.ok else "FAIL")
        lines.append(f"{row.task_id:<22} {row.name[:26]:<26} {values}  {mark}")
    failures = report.failures()
    lines.append("")
    lines.append("all checks passed" if not failures else f"{len(failures)} check(s) failed:")
    lines += [f"  {failure}" for failure in failures]
    return "\n".join(lines)
