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

from logomesh.battle.context import BattleContext
from logomesh.scoring.cis import ScoreCard
from logomesh.scoring.config import DEFAULT_CONFIG, ScoringConfig
from logomesh.scoring.pipeline import Judging, measure_and_score
from logomesh.scoring.testing import flawed_variants
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
                "intent_penalty", "behaviour_penalty", "cis_within_band", "cis_score")
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
        return [Row(task.id, GOOD, GOOD, {}, (("task has a good submission", False),))]
    labelled = {name: task.labelled_submission(name) for name in names}
    cards = {name: scorer(task, item.submission).result_fields() for name, item in labelled.items()}
    good = cards[GOOD]["cis_score"]
    implementing = [name for name in names if labelled[name].label != OFF_INTENT]
    floor_name = min(implementing, key=lambda name: cards[name]["cis_score"])
    floor = cards[floor_name]["cis_score"]
    below_every = f"below every implementation ({floor_name} {floor})"
    rows = [Row(task.id, GOOD, GOOD, cards[GOOD], (("no intent penalty", cards[GOOD]["intent_penalty"] == 1.0),))]
    reference = scorer(task, Submission(task.reference_bytes.decode("utf-8"), "", "")).result_fields()
    rows.append(Row(task.id, REFERENCE, "the judge's reference solution", reference,
                    (("no intent penalty", reference["intent_penalty"] == 1.0),)))
    for name in names:
        if name == GOOD:
            continue
        checks = [(f"below good ({good})", cards[name]["cis_score"] < good)]
        if labelled[name].label == OFF_INTENT:
            checks.append((below_every, cards[name]["cis_score"] < floor))
        rows.append(Row(task.id, name, labelled[name].label, cards[name], tuple(checks)))
    for other_task in others:
        if GOOD not in other_task.submission_names():
            continue
        fields = scorer(task, other_task.labelled_submission(GOOD).submission).result_fields()
        rows.append(Row(task.id, f"cross:{other_task.id}", OFF_INTENT, fields,
                        (("takes the intent penalty", fields["intent_penalty"] < 1.0),
                         (below_every, fields["cis_score"] < floor))))
    base = labelled[GOOD].submission
    for name, label, source in (("unparsable", "good, one colon removed", unparsable_source(base.source)),
                                ("never-ran", "good, exits at import", never_ran_source(base.source))):
        fields = scorer(task, Submission(source, base.tests, base.rationale)).result_fields()
        rows.append(Row(task.id, name, label, fields, ((below_every, fields["cis_score"] < floor),)))
    wrong = [n for n in names if labelled[n].behaviour_defect and labelled[n].label != OFF_INTENT]
    if wrong:
        flawed = labelled[wrong[0]].submission
        pasted = Submission(pasted_source(task, flawed.source), flawed.tests, flawed.rationale)
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
    columns = " ".join(f"{name:>6}" for name in ("R", "A", "T", "L", "red", "int", "beh", "CIS"))
    header = f"{'task':<22} {'submission':<26} {columns}  ok"
    lines = [header, "-" * len(header)]
    for row in report.rows:
        f = row.fields
        if not f:
            lines.append(f"{row.task_id:<22} {row.name:<26} {'':>55}  {'FAIL'}")
            continue
        values = " ".join(f"{f[k]:>6.3f}" for k in ("rationale_score", "architecture_score", "testing_score",
                                                     "logic_score", "red_penalty_applied", "intent_penalty",
                                                     "behaviour_penalty", "cis_score"))
        mark = "-" if not row.checks else ("ok" if row.ok else "FAIL")
        lines.append(f"{row.task_id:<22} {row.name[:26]:<26} {values}  {mark}")
    failures = report.failures()
    lines.append("")
    lines.append("all checks passed" if not failures else f"{len(failures)} check(s) failed:")
    lines += [f"  {failure}" for failure in failures]
    return "\n".join(lines)
