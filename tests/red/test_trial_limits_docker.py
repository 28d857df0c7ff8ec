"""A trial's limit is CPU time: a trial that computes is stopped by the CPU it used, one that waits by the clock.

Every probe runs as a driver; a watchdog thread of the driver reads the code's CPU time from the kernel and
kills the code's processes once a trial has used its timeout in CPU, or has passed it in wall time while the
code used no CPU (a hang), or has passed ``WALL_BACKSTOP`` times it whatever the code does. So a loaded
machine (which slows a computing trial down) cannot end it before it has used its timeout, and every trial
reports the CPU seconds the code used (``Trial.cpu_s``). No upper bound on the wall clock here: a loaded
machine only makes a run longer.
"""

from __future__ import annotations

import multiprocessing
import os
import time
from collections.abc import Iterator
from typing import Any

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

def trickle():
    while True:  # 3 ms of work every 30 ms: never idle for long, never near the CPU cap
        time.sleep(0.03)
        end = time.process_time() + 0.003
        while time.process_time() < end:
            pass
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


def test_a_trickle_that_dodges_the_idle_rule_is_a_hang_of_its_own(box: Sandbox) -> None:
    """Work in slow trickles reaches the wall-clock backstop short of the CPU cap, having chosen to wait most of
    the time: a hang of the code's own making ("timeout", which families count against the code where their
    control answered), not a machine too loaded to run it ("starved", which no family counts)."""
    run = run_driven(box, CODE, ProbeSpec("call", {"target": "trickle", "args": []}, timeout_s=1.0), 5)
    assert run.harness_error == "" and len(run.trials) == 1
    trial = run.trials[0]
    assert trial.status == "timeout" and trial.cpu_s < 1.0, trial
    assert run.duration_s >= WALL_BACKSTOP * 1.0  # it made CPU progress: only the backstop ended it


@pytest.mark.slow  # 12 busy processes a core on the host for about six seconds
def test_a_computing_trial_on_a_starved_machine_is_never_a_hang(box: Sandbox) -> None:
    """Code that computes, on a host so busy the box gets little CPU: it reaches its cap late ("cpu") or the
    backstop first ("starved", the machine's doing); never "timeout", the code's own hang. Measured here with
    24 host busy loops on 2 cores: starved at 0.78 s of CPU in 5.8 s; before the watchdog read the run queue,
    48 loops made a computing trial look asleep ("timeout" after 4.6 s)."""
    stop = multiprocessing.Event()
    burners = [multiprocessing.Process(target=_burn, args=(stop,), daemon=True)
               for _ in range(12 * (os.cpu_count() or 1))]
    for burner in burners:
        burner.start()
    time.sleep(1.0)  # every loop running before the trial starts
    try:
        run = run_driven(box, CODE, ProbeSpec("call", {"target": "spin", "args": []}, timeout_s=1.0), 5)
    finally:
        stop.set()
        for burner in burners:
            burner.join(5)
    assert run.harness_error == "" and len(run.trials) == 1
    trial = run.trials[0]
    assert trial.status in ("starved", "cpu"), trial  # "cpu" if the box got its CPU after all
    assert trial.status == "cpu" or trial.cpu_s < 1.0


def _burn(stop: Any) -> None:
    while not stop.is_set():
        pass
