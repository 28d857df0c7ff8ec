"""Issue 15's "done when", asserted on what ``logomesh calibrate`` prints for the whole library, red agent on.

One run of the command (as a user runs it: a separate process, the real
sandbox, the red agent at its default budget) serves every test here. Each
test recomputes its claim from the printed scores rather than trusting the
command's own ``ok`` marks, so a wrong check in ``calibration.py`` cannot
hide a wrong ordering.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest

from logomesh.tasks import all_tasks

ROOT = Path(__file__).resolve().parents[2]
NOT_IMPLEMENTING = ("unparsable", "never-ran")  # rows calibrate builds from the good source
Rows = dict[str, dict[str, dict[str, Any]]]  # task -> row name -> row

# The whole library, red agent on: ~10 min on 2 idle cores, 23 min beside the rest of the full tier; the full tier only.
pytestmark = [pytest.mark.docker, pytest.mark.slow, pytest.mark.timeout(2700)]


@pytest.fixture(scope="module")
def printed() -> dict[str, Any]:
    run = subprocess.run([sys.executable, "-m", "logomesh", "calibrate", "--sandbox", "docker", "--json"],
                         capture_output=True, text=True, cwd=ROOT, timeout=2700)
    assert run.returncode in (0, 1), run.stderr
    out: dict[str, Any] = json.loads(run.stdout)
    out["returncode"] = run.returncode
    return out


@pytest.fixture(scope="module")
def rows(printed: dict[str, Any]) -> Rows:
    table: Rows = defaultdict(dict)
    for row in printed["rows"]:
        table[row["task_id"]][row["name"]] = row
    return table


def labelled(task_id: str) -> dict[str, str]:
    """Submission name -> label, from the task folder (not from what calibrate printed)."""
    task = next(t for t in all_tasks() if t.id == task_id)
    return {name: task.labelled_submission(name).label for name in task.submission_names()}


def test_every_check_passes_and_the_command_says_so(printed: dict[str, Any], rows: Rows) -> None:
    failures = [f"{row['task_id']}/{row['name']}: {c['check']}" for row in printed["rows"] for c in row["checks"]
                if not c["ok"]]
    assert failures == []
    assert printed["ok"] is True and printed["returncode"] == 0
    assert set(rows) == {t.id for t in all_tasks()}


def test_good_beats_every_labelled_submission_and_takes_no_penalty(rows: Rows) -> None:
    for task_id, by_name in rows.items():
        good = by_name["good"]
        assert good["intent_penalty"] == 1.0 and good["behaviour_penalty"] == 1.0, task_id
        for name in labelled(task_id):
            if name != "good":
                assert by_name[name]["cis_score"] < good["cis_score"], (task_id, name)


def test_no_correct_program_takes_the_intent_penalty(rows: Rows) -> None:
    """The good submission and the judge's reference solution, for every task."""
    for task_id, by_name in rows.items():
        assert by_name["good"]["intent_penalty"] == 1.0, task_id
        assert by_name["reference"]["intent_penalty"] == 1.0, task_id


def test_every_cross_task_program_takes_the_intent_penalty(rows: Rows) -> None:
    library = {t.id for t in all_tasks()}
    for task_id, by_name in rows.items():
        cross = {name.removeprefix("cross:"): row for name, row in by_name.items() if name.startswith("cross:")}
        assert set(cross) == library - {task_id}
        assert all(row["intent_penalty"] < 1.0 for row in cross.values()), task_id


def test_code_that_does_not_implement_the_task_ranks_below_every_labelled_implementation(rows: Rows) -> None:
    for task_id, by_name in rows.items():
        labels = labelled(task_id)
        implementations = [name for name, label in labels.items() if label != "off-intent"]
        floor = min(by_name[name]["cis_score"] for name in implementations)
        outsiders = [name for name, label in labels.items() if label == "off-intent"]
        outsiders += [name for name in by_name if name.startswith("cross:") or name in NOT_IMPLEMENTING]
        assert set(NOT_IMPLEMENTING) <= set(outsiders)
        for name in outsiders:
            assert by_name[name]["cis_score"] < floor, (task_id, name, by_name[name]["cis_score"], floor)


def test_humaneval_canonical_solutions_own_prompts_unpenalised_and_cross_pairs_penalised(
    printed: dict[str, Any],
) -> None:
    humaneval = printed["humaneval"]
    assert humaneval["solutions"] == 164 and humaneval["own_penalised"] == []
    assert humaneval["cross_total"] == 164 * 163
    assert humaneval["cross_penalised"] >= 0.99 * humaneval["cross_total"]
