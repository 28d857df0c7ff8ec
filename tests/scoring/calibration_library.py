"""Issue 15's "done when", asserted on what ``logomesh calibrate`` prints for the whole library, red agent on.

The library is calibrated in shards of two tasks, one ``calibrate --task A --task B`` run each (as a user runs
it: a separate process, the real sandbox, the red agent at its default budget), one shard a test file
(``test_calibration_library_<n>.py``), so the full tier's workers run the shards side by side: in one run the
whole library kept a worker busy 23 minutes beside the rest of the full tier, longer than the rest took. A
task's rows do not depend on the shard it is in: its off-intent code still comes from every other task of the
library (``calibrate --task``). Each test recomputes its claim from the printed scores rather than trusting the
command's own ``ok`` marks, so a wrong check in ``calibration.py`` cannot hide a wrong ordering. The HumanEval
check, which ``calibrate`` runs only over the whole library, is asserted on the command in
``test_commands.py`` and on its figures in ``test_intent.py``.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any, ClassVar

import pytest

from logomesh.tasks import all_tasks

ROOT = Path(__file__).resolve().parents[2]
NOT_IMPLEMENTING = ("unparsable", "never-ran")  # rows calibrate builds from the good source
Rows = dict[str, dict[str, dict[str, Any]]]  # task -> row name -> row

# Each shard pairs a task with a red.py of its own (more red plays to judge) with one without.
SHARDS: tuple[tuple[str, ...], ...] = (
    ("bank-ledger", "email-validator"),
    ("connection-pool", "fib-recursive"),
    ("lru-cache", "safe-calculator"),
    ("merkle-root", "safe-path"),
    ("rate-limiter", "sql-select"),
)
TIMEOUT_S = 1800  # a shard takes about 5 minutes beside the rest of the full tier

# The library's tasks, red agent on: the full tier only.
MARKS = [pytest.mark.docker, pytest.mark.slow, pytest.mark.timeout(TIMEOUT_S)]


def labelled(task_id: str) -> dict[str, str]:
    """Submission name -> label, from the task folder (not from what calibrate printed)."""
    task = next(t for t in all_tasks() if t.id == task_id)
    return {name: task.labelled_submission(name).label for name in task.submission_names()}


class LibraryCalibration:
    """The checks on one shard's printed rows; a shard file subclasses it as ``Test...`` naming its ``TASKS``."""

    TASKS: ClassVar[tuple[str, ...]] = ()

    @pytest.fixture(scope="class")
    def printed(self) -> dict[str, Any]:
        tasks = [arg for task in self.TASKS for arg in ("--task", task)]
        run = subprocess.run([sys.executable, "-m", "logomesh", "calibrate", "--sandbox", "docker", "--json", *tasks],
                             capture_output=True, text=True, cwd=ROOT, timeout=TIMEOUT_S)
        assert run.returncode in (0, 1), run.stderr
        out: dict[str, Any] = json.loads(run.stdout)
        out["returncode"] = run.returncode
        return out

    @pytest.fixture(scope="class")
    def rows(self, printed: dict[str, Any]) -> Rows:
        table: Rows = defaultdict(dict)
        for row in printed["rows"]:
            table[row["task_id"]][row["name"]] = row
        return table

    def test_every_check_passes_and_the_command_says_so(self, printed: dict[str, Any], rows: Rows) -> None:
        failures = [f"{row['task_id']}/{row['name']}: {c['check']}" for row in printed["rows"] for c in row["checks"]
                    if not c["ok"]]
        assert failures == []
        assert printed["ok"] is True and printed["returncode"] == 0
        assert set(rows) == set(self.TASKS)
        assert printed["humaneval"] is None  # a shard is not the whole library

    def test_good_beats_every_labelled_submission_and_takes_no_penalty(self, rows: Rows) -> None:
        for task_id, by_name in rows.items():
            good = by_name["good"]
            assert good["intent_penalty"] == 1.0 and good["behaviour_penalty"] == 1.0, task_id
            for name in labelled(task_id):
                if name != "good":
                    assert by_name[name]["cis_score"] < good["cis_score"], (task_id, name)

    def test_no_correct_program_takes_the_intent_penalty(self, rows: Rows) -> None:
        """The good submission and the judge's reference solution, for every task."""
        for task_id, by_name in rows.items():
            assert by_name["good"]["intent_penalty"] == 1.0, task_id
            assert by_name["reference"]["intent_penalty"] == 1.0, task_id

    def test_every_cross_task_program_takes_the_intent_penalty(self, rows: Rows) -> None:
        library = {t.id for t in all_tasks()}
        for task_id, by_name in rows.items():
            cross = {name.removeprefix("cross:"): row for name, row in by_name.items() if name.startswith("cross:")}
            assert set(cross) == library - {task_id}
            assert all(row["intent_penalty"] < 1.0 for row in cross.values()), task_id

    def test_code_that_does_not_implement_the_task_ranks_below_every_labelled_implementation(self, rows: Rows) -> None:
        for task_id, by_name in rows.items():
            labels = labelled(task_id)
            implementations = [name for name, label in labels.items() if label != "off-intent"]
            floor = min(by_name[name]["cis_score"] for name in implementations)
            outsiders = [name for name, label in labels.items() if label == "off-intent"]
            outsiders += [name for name in by_name if name.startswith("cross:") or name in NOT_IMPLEMENTING]
            assert set(NOT_IMPLEMENTING) <= set(outsiders)
            for name in outsiders:
                assert by_name[name]["cis_score"] < floor, (task_id, name, by_name[name]["cis_score"], floor)
