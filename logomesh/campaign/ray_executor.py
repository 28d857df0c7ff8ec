"""The Ray executor: battles as Ray tasks, results streamed back to the one ledger writer.

Install with ``pip install 'logomesh[ray]'``. Without ``--ray-address`` it starts
a local Ray instance sized to ``workers`` CPUs and shuts it down afterwards;
with one it joins an existing cluster, where every node needs logomesh, the
task library and the sandbox image (docs/campaigns.md). Ray's own task retries
are off: a task whose worker or node was lost is submitted again by the driver,
which knows the attempt number and records it in the battle's attributes.
"""

from __future__ import annotations

import socket
import threading
from collections import deque
from collections.abc import Generator, Sequence
from pathlib import Path
from typing import Any

from logomesh.campaign.executor import (
    MAX_ATTEMPTS,
    ExecutorEvent,
    JobFinished,
    JobStarted,
    job_lost,
    worker_error,
)
from logomesh.campaign.plan import BattleJob, Settings
from logomesh.campaign.work import JobDone, PlayFn, play_job
from logomesh.sandbox.docker import remove_orphans

INTERRUPT_POLL_S = 0.2  # how often a wait for Ray tasks looks whether the campaign was interrupted


class RayUnavailable(RuntimeError):
    """Ray is not installed or the cluster cannot be reached; the message names the fix."""


def _import_ray() -> Any:
    try:
        import ray
    except ImportError:
        raise RayUnavailable("the Ray executor needs Ray: pip install 'logomesh[ray]'") from None
    return ray


def check_reachable(address: str, timeout_s: float = 5.0) -> None:
    """Fail fast on a ``HOST:PORT`` nobody answers at: Ray itself retries for minutes before giving up."""
    host, sep, port = address.rpartition(":")
    if not sep or not port.isdigit() or "://" in address:
        return  # "auto", "ray://…" and the like are Ray's to resolve
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=timeout_s).close()
    except OSError as exc:
        raise RayUnavailable(f"no Ray cluster answers at {address} ({exc.strerror or exc}): "
                             "check --ray-address (the head node's HOST:PORT, 6379 by default)") from None


def check_ray(address: str | None) -> None:
    """Before a campaign writes anything: Ray is installed and, when an address is given, something answers there."""
    _import_ray()
    if address:
        check_reachable(address)


def _play_remote(play: PlayFn, job: BattleJob, settings: Settings, home: Path) -> JobDone:
    return play(job, settings, home)


class RayExecutor:
    name = "ray"

    def __init__(self, workers: int, settings: Settings, home: Path, address: str | None = None,
                 play: PlayFn = play_job, max_attempts: int = MAX_ATTEMPTS) -> None:
        if workers < 1:
            raise ValueError("a campaign needs at least one worker")
        self.workers = workers
        self.settings = settings
        self.home = home
        self.address = address
        self.play = play
        self.max_attempts = max_attempts
        self._interrupted = threading.Event()

    def interrupt(self) -> None:
        self._interrupted.set()

    def _connect(self, ray: Any) -> bool:
        """Start or join Ray; True when this executor started it (and so shuts it down)."""
        if ray.is_initialized():
            return False
        if self.address:
            check_reachable(self.address)
        try:
            if self.address:
                ray.init(address=self.address, log_to_driver=False)
            else:
                ray.init(num_cpus=self.workers, include_dashboard=False, log_to_driver=False)
        except Exception as exc:
            where = self.address or "a local Ray instance"
            first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            raise RayUnavailable(f"could not start or join {where}: {first}") from None
        return True

    def run(self, jobs: Sequence[BattleJob]) -> Generator[ExecutorEvent, None, None]:
        ray = _import_ray()
        started_here = self._connect(ray)
        remote = ray.remote(num_cpus=1, max_retries=0)(_play_remote)
        queue = deque(jobs)
        inflight: dict[Any, BattleJob] = {}
        try:
            while (queue or inflight) and not self._interrupted.is_set():
                while queue and len(inflight) < self.workers:
                    job = queue.popleft()
                    inflight[remote.remote(self.play, job, self.settings, self.home)] = job
                    yield JobStarted(job)
                ready, _ = ray.wait(list(inflight), num_returns=1, timeout=INTERRUPT_POLL_S)
                for ref in ready:
                    yield from self._collect(ray, ref, inflight.pop(ref), queue)
        finally:
            for ref in inflight:
                ray.cancel(ref, force=True)
            if started_here:
                ray.shutdown()
            self._sweep()

    def _sweep(self) -> None:
        """Remove the Docker sandboxes of this host whose battle died with its Ray worker or node."""
        if self.settings.sandbox != "bwrap":
            remove_orphans()

    def _collect(
        self, ray: Any, ref: Any, job: BattleJob, queue: deque[BattleJob]
    ) -> Generator[ExecutorEvent, None, None]:
        try:
            yield JobFinished(ray.get(ref))
            return
        except ray.exceptions.RayTaskError as exc:  # the play function raised: a bug, recorded as such
            yield JobFinished(worker_error(job, self.settings, self.home, exc.cause or exc))
        except ray.exceptions.RayError as exc:  # worker, node or object lost: the battle runs again
            yield job_lost(job, f"Ray lost the task: {type(exc).__name__}", queue, self.settings, self.home,
                           self.max_attempts)
