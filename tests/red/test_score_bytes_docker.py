"""Scored twice in two processes with the red agent on, a submission gives byte-identical result JSON.

The submissions are the library's whose findings depend on timing or on a thread schedule (a race, an
exponential regex, an exponential recursion), the ones that once gave different bytes on a rerun. The two
processes of each pair run at the same time, so each runs under the other's load: a verdict that
followed the machine's load rather than the seed and the code would show here.
``benchmarks/determinism.py`` runs the same check over every labelled submission.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.docker
ROOT = Path(__file__).resolve().parents[2]
# (task, submission, the finding family its label names)
CASES = (
    ("rate-limiter", "no-lock", "race"),
    ("email-validator", "redos", "complexity"),
)


def _score(task: str, submission: str) -> subprocess.Popen[bytes]:
    path = ROOT / "tasks" / task / "submissions" / f"{submission}.json"
    command = [sys.executable, "-m", "logomesh", "score", "--task", task, "--submission", str(path),
               "--sandbox", "docker", "--json", "--seed", "0"]
    return subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE)


@pytest.mark.slow
@pytest.mark.parametrize(("task", "submission", "family"), CASES)
def test_two_processes_give_the_same_bytes(task: str, submission: str, family: str) -> None:
    first, second = _score(task, submission), _score(task, submission)
    outputs = [process.communicate(timeout=300) for process in (first, second)]
    assert [first.returncode, second.returncode] == [0, 0], outputs[0][1][-400:] + outputs[1][1][-400:]
    assert outputs[0][0] == outputs[1][0]
    result = json.loads(outputs[0][0])["result"]
    assert result["red_enabled"] is True
    families = [v["family"] for v in result["red_analysis"]["vulnerabilities"]]
    assert family in families  # the timing or race finding is there, in both, not absent from both
