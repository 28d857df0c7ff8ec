"""The local executor: a bounded pool of worker processes, one job each at a time.

Each worker is a spawned process holding its own embedding model and opening
one sandbox per battle. The driver sends a worker one job, waits for its
result on the worker's pipe or for its death on the process sentinel, and
only then sends the next; so it always knows which job a dead worker held and
runs that job again (up to ``MAX_ATTEMPTS``), recording the retry.
"""

from __future__ import annotations

import contextlib
import multiprocessing as mp
import os
import signal
import threading
from collections import deque
from collections.abc import Generator, Iterator, Sequence
from dataclasses import dataclass
from multiprocessing.connection import Connection, wait
from multiprocessing.process import BaseProcess
from pathlib import Path
from types import FrameType

from logomesh.campaign.executor import (
    MAX_ATTEMPTS,
    ExecutorEvent,
    JobFinished,
    JobStarted,
    job_lost,
    worker_error,
)
from logomesh.campaign.plan import BattleJob, Settings
from logomesh.campaign.work import PlayFn, play_job
from logomesh.sandbox.choose import sweep_orphans
from logomesh.sandbox.warm import keep_warm

STOP_GRACE_S = 20.0


def _exit_on_term(signum: int, frame: FrameType | None) -> None:
    raise SystemExit(128 + signum)  # unwinds the battle, so its sandbox is closed and removed


def _redirect_output(log_file: Path) -> None:
    """Send the worker's stdout and stderr (warnings, a crash's traceback) to ``log_file``, not the terminal."""
    log_file.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(log_file, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    os.dup2(fd, 1)
    os.dup2(fd, 2)
    os.close(fd)


def serve(conn: Connection, play: PlayFn, settings: Settings, home: Path, log_file: Path | None = None) -> None:
    """A worker's loop: a job in, a ``JobDone`` out, until the driver sends None or terminates it."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the driver's to handle
    signal.signal(signal.SIGTERM, _exit_on_term)
    if log_file is not None:
        _redirect_output(log_file)
    with keep_warm(settings.sandbox):  # the next battle's box opens while this one runs
        _serve_jobs(conn, play, settings, home)


def _serve_jobs(conn: Connection, play: PlayFn, settings: Settings, home: Path) -> None:
    while True:
        try:
            job = conn.recv()
        except EOFError:
            return
        if job is None:
            return
        try:
            done = play(job, settings, home)
        except Exception as exc:  # play_job records failures itself; another play function may not
            done = worker_error(job, settings, home, exc)
        conn.send(done)


@dataclass
class _Slot:
    process: BaseProcess
    conn: Connection
    job: BattleJob | None = None


class LocalExecutor:
    name = "local"

    def __init__(self, workers: int, settings: Settings, home: Path, play: PlayFn = play_job,
                 max_attempts: int = MAX_ATTEMPTS, log_file: Path | None = None) -> None:
        if workers < 1:
            raise ValueError("a campaign needs at least one worker")
        self.workers = workers
        self.settings = settings
        self.home = home
        self.play = play
        self.max_attempts = max_attempts
        self.log_file = log_file
        self._ctx = mp.get_context("spawn")  # no fork of a process that holds threads and a model
        self._slots: list[_Slot] = []
        self._interrupted = threading.Event()
        self._wake_reader, self._wake_writer = self._ctx.Pipe(duplex=False)  # wakes ``run`` from ``wait``

    def worker_pids(self) -> list[int]:
        return [s.process.pid for s in self._slots if s.process.pid is not None]

    def _spawn(self) -> _Slot:
        here, there = self._ctx.Pipe()
        process = self._ctx.Process(target=serve, args=(there, self.play, self.settings, self.home, self.log_file),
                                    name="logomesh-campaign-worker", daemon=True)
        process.start()
        there.close()
        return _Slot(process, here)

    def interrupt(self) -> None:
        self._interrupted.set()
        with contextlib.suppress(OSError, ValueError):
            self._wake_writer.send_bytes(b"stop")

    def run(self, jobs: Sequence[BattleJob]) -> Generator[ExecutorEvent, None, None]:
        queue = deque(jobs)
        self._sweep()  # left by an earlier campaign whose processes were killed
        self._slots = [self._spawn() for _ in range(min(self.workers, len(queue)))]
        try:
            while not self._interrupted.is_set():
                for slot in self._slots:
                    if slot.job is None and queue:
                        slot.job = queue.popleft()
                        slot.conn.send(slot.job)
                        yield JobStarted(slot.job)
                busy = [s for s in self._slots if s.job is not None]
                if not busy:
                    return
                ready = set(wait([s.conn for s in busy] + [s.process.sentinel for s in busy] + [self._wake_reader]))
                if self._interrupted.is_set():
                    return
                for slot in busy:
                    if slot.conn in ready or slot.process.sentinel in ready:
                        yield from self._collect(slot, queue)
        finally:
            self._stop_all()

    def _collect(self, slot: _Slot, queue: deque[BattleJob]) -> Iterator[ExecutorEvent]:
        job = slot.job
        assert job is not None
        try:
            if slot.conn.poll():
                done = slot.conn.recv()
                slot.job = None
                yield JobFinished(done)
                return
        except (EOFError, OSError, ValueError):
            pass  # a worker killed while it wrote its answer: the job is lost, like any other
        if slot.process.is_alive():
            return
        reason = f"worker process {slot.process.pid} died (exit code {slot.process.exitcode})"
        self._replace(slot)
        yield job_lost(job, reason, queue, self.settings, self.home, self.max_attempts)

    def _replace(self, slot: _Slot) -> None:
        slot.conn.close()
        slot.process.join(timeout=1.0)
        fresh = self._spawn()
        slot.process, slot.conn, slot.job = fresh.process, fresh.conn, None

    def _stop_all(self) -> None:
        """Idle workers are told to leave; busy ones are terminated so their sandboxes are removed."""
        for slot in self._slots:
            with contextlib.suppress(OSError, ValueError):
                if slot.job is None:
                    slot.conn.send(None)
                else:
                    slot.process.terminate()
        for slot in self._slots:
            slot.process.join(timeout=STOP_GRACE_S)
            if slot.process.is_alive():
                slot.process.kill()
                slot.process.join(timeout=5.0)
            slot.conn.close()
        self._slots = []
        self._sweep()  # the sandboxes of workers that were killed, not stopped

    def _sweep(self) -> None:
        """Remove what killed sandboxes left (Docker containers; a bubblewrap box dies with its worker, so none)."""
        sweep_orphans(self.settings.sandbox)
