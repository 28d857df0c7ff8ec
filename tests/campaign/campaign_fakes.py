"""Play functions for executor tests: fast stand-ins for a battle, and ones that kill their worker.

They run in real worker processes (spawned, or Ray workers), so they are
module-level and importable; state shared with the test goes through files.
"""

from __future__ import annotations

import dataclasses
import os
import sys
import time
from pathlib import Path

from logomesh.battle.record import PlayedBattle, failed_played
from logomesh.battle.result import ResultEnding
from logomesh.battle.scores import Scores
from logomesh.campaign.plan import BattleJob, Settings
from logomesh.campaign.work import JobDone, request_for

MARKERS_ENV = "LOGOMESH_TEST_MARKERS"


def fake_cis(job: BattleJob) -> float:
    """A score that depends only on the job, so a test knows what every battle must record."""
    return round(0.5 + 0.01 * (job.index % 40), 4)


def quick_play(job: BattleJob, settings: Settings, home: Path) -> JobDone:
    """A scored battle without a sandbox; records the worker pid so tests can see who ran what."""
    base = failed_played(request_for(job, settings, home), "none", "")
    result = dataclasses.replace(base.result, ending=ResultEnding("scored"),
                                 scores=Scores.from_json({**base.result.scores.to_json(),
                                                          "cis_score": fake_cis(job)}))
    attributes = {**base.attributes, "worker_pid": str(os.getpid())}
    time.sleep(0.05)
    return JobDone(job, PlayedBattle(result, {"task_spec": job.task_id.encode()}, attributes, None), {"sandbox": 0.05})


def marking_play(job: BattleJob, settings: Settings, home: Path) -> JobDone:
    """``quick_play`` that leaves ``home/played/INDEX`` once played, so a test sees the work done without a clock."""
    done = quick_play(job, settings, home)
    (home / "played").mkdir(exist_ok=True)
    (home / "played" / str(job.index)).write_text(str(os.getpid()))
    return done


STALLED = "stalled.pid"


def stall_first_job(job: BattleJob, settings: Settings, home: Path) -> JobDone:
    """Job 0's first attempt writes its worker's pid to ``home/stalled.pid`` and waits far longer than any test:
    a test kills that worker mid-battle. Every other play is ``quick_play``."""
    if job.index == 0 and job.attempt == 1:
        (home / f"{STALLED}.tmp").write_text(str(os.getpid()))
        (home / f"{STALLED}.tmp").rename(home / STALLED)
        time.sleep(60)
    return quick_play(job, settings, home)


def slow_play(job: BattleJob, settings: Settings, home: Path) -> JobDone:
    """``quick_play`` that takes a second, so a test can kill a worker while it is busy."""
    time.sleep(1.0)
    return quick_play(job, settings, home)


def crash_first_attempt(job: BattleJob, settings: Settings, home: Path) -> JobDone:
    """Kills its own worker process on a job's first attempt when the job index is even."""
    if job.index % 2 == 0 and job.attempt == 1:
        os._exit(17)
    return quick_play(job, settings, home)


def always_crash(job: BattleJob, settings: Settings, home: Path) -> JobDone:
    os._exit(17)


def raise_error(job: BattleJob, settings: Settings, home: Path) -> JobDone:
    raise RuntimeError(f"play broke on {job.battle_id}")


def noisy_play(job: BattleJob, settings: Settings, home: Path) -> JobDone:
    """Prints on both streams, as a library warning or a crash's traceback would."""
    print(f"stdout of {job.battle_id}", flush=True)
    print(f"stderr of {job.battle_id}", file=sys.stderr, flush=True)
    return quick_play(job, settings, home)


def endless_play(job: BattleJob, settings: Settings, home: Path) -> JobDone:
    """A battle far longer than any test waits: if an interrupt does not stop it, the test fails, not hangs."""
    time.sleep(60)
    return quick_play(job, settings, home)
