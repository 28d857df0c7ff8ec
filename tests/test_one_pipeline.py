"""Battle and ``score`` are one judging pipeline: the same code, seed and settings give the same scores.

Real CLI processes, real Docker. The issue measured L 0.9 in a battle against
1.0 from ``score`` for rate-limiter's ``good``: only ``score`` ran the flawed
variants against the purple tests and told L whether the red agent had run.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from logomesh.tasks import default_tasks_dir

SCORES = ("rationale_score", "architecture_score", "testing_score", "logic_score", "cis_score",
          "red_penalty_applied", "intent_penalty", "red_analysis", "tests", "anchors")


def logomesh(*args: str) -> dict[str, object]:
    done = subprocess.run([sys.executable, "-m", "logomesh", *args, "--json"], capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stderr
    result: dict[str, object] = json.loads(done.stdout)
    return result


@pytest.mark.docker
@pytest.mark.parametrize(("task_id", "variant", "red"), [("rate-limiter", "good", False),
                                                          ("fib-recursive", "binet-float", True)])
@pytest.mark.slow
def test_battle_and_score_agree_on_every_score(tmp_path: Path, task_id: str, variant: str, red: bool) -> None:
    submission = default_tasks_dir() / task_id / "submissions" / f"{variant}.json"
    switches = ["--red-budget", "5"] if red else ["--no-red"]
    battle = logomesh("battle", "run", "--task", task_id, "--mock", variant, "--seed", "3", "--sandbox", "docker",
                      "--home", str(tmp_path), *switches)
    scored = logomesh("score", "--task", task_id, "--submission", str(submission), "--seed", "3",
                      "--sandbox", "docker", *switches)
    scored = scored["result"]  # type: ignore[assignment]  # score prints {"result": ..., "sha256": ...}
    assert {k: battle[k] for k in SCORES} == {k: scored[k] for k in SCORES}
    assert battle["anchors"]  # L's parts were measured, not skipped
