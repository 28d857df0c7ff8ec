"""What every campaign executor yields, and the sizing of the local pool.

An executor's ``run(jobs)`` is a generator of ``ExecutorEvent``s. It hands a
worker a new job only when the driver asks for the next event, so a driver
that appends each finished battle to the ledger before it reads on gets
back-pressure for free: a slow ledger slows the campaign, it never drops a
result. Closing the generator stops every worker and removes their sandboxes.
"""

from __future__ import annotations

import os
from collections import deque
from collections.abc import Generator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Protocol

from logomesh.battle.record import failed_played
from logomesh.campaign.plan import BattleJob, Settings
from logomesh.campaign.work import JobDone, request_for

SANDBOX_MEMORY_BYTES = 128 * 1024 * 1024
WORKER_MEMORY_BYTES = 640 * 1024 * 1024  # a worker process: Python, torch and the embedding model, measured ~600 MB
SANDBOX_CPUS = 0.5
MAX_ATTEMPTS = 3
MAX_WORKERS = 256  # battles at once, on one machine or a cluster: each holds a sandbox and a worker process


@dataclass(frozen=True)
class JobStarted:
    job: BattleJob


@dataclass(frozen=True)
class JobLost:
    """The worker running ``job`` died; the job runs again as attempt ``job.attempt + 1``."""

    job: BattleJob
    reason: str


@dataclass(frozen=True)
class JobFinished:
    done: JobDone


ExecutorEvent = JobStarted | JobLost | JobFinished


class Executor(Protocol):
    name: str
    workers: int

    def run(self, jobs: Sequence[BattleJob]) -> Generator[ExecutorEvent, None, None]: ...

    def interrupt(self) -> None:
        """From any thread: a running ``run`` stops waiting for battles and returns, stopping its workers.

        Battles in flight are dropped, as on Ctrl-C; every event already yielded stands.
        """
        ...


def worker_error(job: BattleJob, settings: Settings, home: Path, exc: BaseException) -> JobDone:
    """The play function raised (``play_job`` never does): a failed battle naming the exception."""
    reason = f"worker error: {type(exc).__name__}: {exc}".splitlines()[0]
    return JobDone(job, failed_played(request_for(job, settings, home), "engine", reason))


def job_lost(job: BattleJob, reason: str, queue: deque[BattleJob], settings: Settings, home: Path,
             max_attempts: int) -> ExecutorEvent:
    """A job whose worker was lost: queued again as its next attempt, or recorded as failed after the last."""
    if job.attempt >= max_attempts:
        failed = failed_played(request_for(job, settings, home), "engine", f"{reason} ({job.attempt} attempts)")
        return JobFinished(JobDone(job, failed))
    queue.appendleft(replace(job, attempt=job.attempt + 1))
    return JobLost(job, reason)


def available_memory() -> int:
    """MemAvailable from /proc/meminfo, else total physical memory."""
    try:
        with open("/proc/meminfo", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")


def default_workers(cpus: int | None = None, memory: int | None = None) -> int:
    """As many battles as the cores (half a CPU per sandbox) and memory (a sandbox plus a worker) allow."""
    cpus = cpus if cpus is not None else (len(os.sched_getaffinity(0)) or 1)
    memory = memory if memory is not None else available_memory()
    by_cpu = int(cpus / SANDBOX_CPUS)
    by_memory = memory // (SANDBOX_MEMORY_BYTES + WORKER_MEMORY_BYTES)
    return max(1, min(by_cpu, by_memory))
