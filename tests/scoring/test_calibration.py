"""``calibrate_task``'s checks and printed rows, on one real task with the sandbox's measurements built by hand."""

from __future__ import annotations

from pathlib import Path

from logomesh.scoring import score_submission
from logomesh.scoring.calibration import GOOD, Figures, Report, Row, Scorer, calibrate_task, table
from logomesh.scoring.cis import ScoreCard
from logomesh.scoring.minilm import MiniLM
from logomesh.submission import Submission
from logomesh.tasks import TaskSpec, all_tasks

from .calibration_library import SHARDS
from .runs import measured, suite

FIGURE_KEYS = ("rationale_score", "architecture_score", "testing_score", "logic_score", "red_penalty_applied",
               "intent_penalty", "behaviour_penalty", "cis_within_band", "cis_score")


def scorer_passing(passing: str) -> Scorer:
    """A scorer under which only the source of submission ``passing`` passes every hidden test."""

    def score(task: TaskSpec, submission: Submission) -> ScoreCard:
        passes = submission.source == task.labelled_submission(passing).submission.source
        return score_submission(task, submission, measured(suite(12) if passes else suite(3, 9)))

    return score


def by_name(rows: list[Row]) -> dict[str, Row]:
    return {row.name: row for row in rows}


def test_figures_are_the_result_fields_the_ledger_records(model: MiniLM, rate_limiter: TaskSpec) -> None:
    card = score_submission(rate_limiter, rate_limiter.labelled_submission("no-lock").submission,
                            measured(suite(12, 4), suite(5, 1)))
    fields = card.result_fields()
    figures = Figures.of(card)
    assert figures.to_json() == {key: fields[key] for key in FIGURE_KEYS}
    assert list(figures.to_json()) == list(FIGURE_KEYS)
    assert figures.cis == fields["cis_score"] != card.cis_score  # rounded as the result rounds it, not raw


def test_the_checks_compare_the_figures_and_a_wrong_order_fails(model: MiniLM, rate_limiter: TaskSpec) -> None:
    other = "no-lock"
    fair = by_name(calibrate_task(rate_limiter, [], scorer_passing(GOOD)))
    good = fair[GOOD].figures
    assert good is not None and fair[GOOD].ok and fair["reference"].ok
    assert fair[other].checks == ((f"below good ({good.cis})", True),)
    flipped = by_name(calibrate_task(rate_limiter, [], scorer_passing(other)))
    assert not flipped[other].ok  # the non-good submission now passes every hidden test: it outscores good
    row = flipped[other].to_json()
    assert row["checks"][0]["ok"] is False and row["ok"] is False
    figures = flipped[other].figures
    assert figures is not None and row["cis_score"] == figures.cis > flipped[GOOD].to_json()["cis_score"]
    assert set(row) == {"task_id", "name", "label", "checks", "ok", *FIGURE_KEYS}
    assert f"{figures.cis:>6.3f}  FAIL" in table_of(list(flipped.values()))


def test_a_task_without_a_good_submission_is_one_failed_row_without_figures() -> None:
    row = Row("t", GOOD, GOOD, None, (("task has a good submission", False),))
    assert row.to_json() == {"task_id": "t", "name": GOOD, "label": GOOD,
                             "checks": [{"check": "task has a good submission", "ok": False}], "ok": False}
    assert table_of([row]).splitlines()[2].endswith("FAIL")


def table_of(rows: list[Row]) -> str:
    return table(Report(rows))


def test_the_library_calibration_shards_hold_every_task_once_each_in_its_own_file() -> None:
    """``test_calibration_library_<n>.py`` runs shard n: together they calibrate the whole library."""
    held = [task for shard in SHARDS for task in shard]
    assert sorted(held) == sorted(t.id for t in all_tasks())
    here = Path(__file__).parent
    files = sorted(path.name for path in here.glob("test_calibration_library_*.py"))
    assert files == sorted(f"test_calibration_library_{n}.py" for n in range(1, len(SHARDS) + 1))
    for n in range(1, len(SHARDS) + 1):
        assert f"SHARDS[{n - 1}]" in (here / f"test_calibration_library_{n}.py").read_text(encoding="utf-8")
