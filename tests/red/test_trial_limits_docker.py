"""A trial's limit is CPU time: a trial that computes is stopped by the CPU it used, one that waits by the clock.

Every probe runs as a driver; a watchdog thread of the driver reads the code's CPU time from the kernel and
kills the code's processes once a trial has used its timeout in CPU, or has passed it in wall time while the
code used no CPU (a hang), or has passed ``WALL_BACKSTOP`` times it whatever the code does. So a loaded
machine (which slows a computing trial down) cannot end it before it has used its timeout, and every trial
reports the CPU seconds the code used (``Trial.cpu_s``). No upper bound on the wall clock here: a loaded
machine only makes a run longer.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from logomesh.red.driven import run_driven
from logomesh.red.executor import WALL_BACKSTOP, ProbeSpec, Trial
from logomesh.sandbox import Sandbox, open_sandbox

pytestmark = pytest.mark.docker
CODE = '''
import time

def spin():
    while True:
        pass

def wait():
    time.sleep(3)  # past the 1 s timeout, short of the 5 s backstop: only a kill at the timeout makes it a timeout
    return "woke"

def quick():
    return sum(range(1000))
'''


@pytest.fixture(scope="module")
def box() -> Iterator[Sandbox]:
    with open_sandbox("docker") as sandbox:
        yield sandbox


def _trial(box: Sandbox, target: str) -> Trial:
    run = run_driven(box, CODE, ProbeSpec("call", {"target": target, "args": []}, timeout_s=1.0), 5)
    assert run.harness_error == "" and len(run.trials) == 1
    return run.trials[0]


def test_a_computing_trial_is_stopped_by_its_cpu_time(box: Sandbox) -> None:
    run = run_driven(box, CODE, ProbeSpec("call", {"target": "spin", "args": []}, timeout_s=1.0), 5)
    assert run.harness_error == "" and len(run.trials) == 1
    trial = run.trials[0]
    assert trial.status in ("timeout", "cpu")
    # It ran until it had used its 1 s timeout in CPU, or, on a machine so loaded that it could not get that
    # CPU in time, until the wall-clock backstop: never stopped at 1 s of wall clock.
    assert trial.cpu_s >= 0.95 or run.duration_s >= WALL_BACKSTOP * 1.0, (trial.cpu_s, run.duration_s)


def test_a_waiting_trial_is_stopped_by_the_clock(box: Sandbox) -> None:
    trial = _trial(box, "wait")
    assert trial.status == "timeout" and trial.cpu_s < 0.5  # killed at its timeout: it never woke up to answer


def test_a_trial_that_answers_reports_its_cpu(box: Sandbox) -> None:
    trial = _trial(box, "quick")
    assert trial.status == "ok" and trial.result["repr"] == "499500"
    assert 0.0 <= trial.cpu_s < 0.5
