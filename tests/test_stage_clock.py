"""The stage clock: wall time per battle stage, from the event stream, on a clock the test moves."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from logomesh.events import BattleStarted, StageStarted, fan_out
from logomesh.stage_clock import StageClock, describe_stages, process_age_s


class Ticks:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_each_stage_is_charged_the_time_until_the_next_one_starts() -> None:
    ticks = Ticks()
    clock = StageClock(ticks, start_up=1.5)
    ticks.now += 0.25
    clock(BattleStarted("b", "t", "p", 0))  # not a stage: still start-up
    ticks.now += 0.25
    clock(StageStarted("b", "purple"))
    ticks.now += 2.0
    clock(StageStarted("b", "sandbox"))
    ticks.now += 3.0
    clock(StageStarted("b", "purple"))  # a stage entered twice adds up
    ticks.now += 1.0
    assert clock.stop() == {"start-up": 2.0, "purple": 3.0, "sandbox": 3.0}
    ticks.now += 9.0
    assert clock.stop() == {"start-up": 2.0, "purple": 3.0, "sandbox": 3.0}  # stopped: nothing more is charged


def test_without_a_start_up_nothing_counts_before_the_first_stage() -> None:
    ticks = Ticks()
    clock = StageClock(ticks)
    ticks.now += 5.0
    clock(StageStarted("b", "red"))
    ticks.now += 0.5
    assert clock.stop() == {"red": 0.5}


def test_the_line_for_people_names_every_stage_in_order_and_the_total() -> None:
    line = describe_stages({"start-up": 1.234, "red": 5.0, "ledger": 0.1})
    assert line == "stages: start-up 1.23 s · red 5.00 s · ledger 0.10 s · total 6.33 s"


def test_fan_out_hands_every_event_to_every_sink_in_order() -> None:
    seen: list[str] = []
    sink = fan_out(lambda e: seen.append("a:" + type(e).__name__), lambda e: seen.append("b:" + type(e).__name__))
    sink(StageStarted("b", "purple"))
    assert seen == ["a:StageStarted", "b:StageStarted"]


@pytest.mark.skipif(not os.path.exists("/proc/self/stat"), reason="reads /proc")
def test_process_age_counts_from_the_process_start() -> None:
    code = "import time; time.sleep(0.6); from logomesh.stage_clock import process_age_s; print(process_age_s())"
    age = float(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout)
    assert 0.55 <= age < 30.0  # /proc counts in ticks of 10 ms
    assert process_age_s() > 0.0
