"""The Ray executor: battles as Ray tasks, results streamed back to the one ledger writer.

Install with ``pip install 'logomesh[ray]'``. Without ``--ray-address`` it starts
a local Ray instance sized to ``workers`` CPUs and shuts it down afterwards;
with one it joins an existing cluster, where every node needs logomesh, the
task library and the sandbox image (docs/campaigns.md). Ray's own task retries
are off: a task whose worker or node was lost is submitted again by the driver,
which knows the attempt number and records it in the battle's attributes.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
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
from logomesh.sandbox.choose import sweep_orphans

INTERRUPT_POLL_S = 0.2  # how often a wait for Ray tasks looks whether the campaign was interrupted


class RayUnavailable(RuntimeError):
    """Ray is not installed or the cluster cannot be reached; the message names the fix."""


def _import_ray() -> Any:
    try:
        import ray
    except ImportError:
        raise RayUnavailable("the Ray executor needs Ray: pip install 'logomesh[ray]'") from None
    return ray


ADDRESS_HINT = "check --ray-address (the head node's HOST:PORT, 6379 by default)"
ANSWER_TIMEOUT_S = 5.0  # to connect, and then for Ray's server to answer the HTTP/2 greeting
JOIN_TIMEOUT_S = 30.0  # for a driver to join: refused, Ray retries 20 s (a wrong token) to many minutes (not Ray)
# What an HTTP/2 client says first: the connection preface and an empty SETTINGS frame. Ray's cluster address is
# its GCS, a gRPC server, which answers with a SETTINGS frame of its own at once.
HTTP2_GREETING = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + bytes([0, 0, 0, 4, 0, 0, 0, 0, 0])
SETTINGS_FRAME = 4
# A driver that joins the cluster and leaves: one line on stdout says why it could not.
_JOIN = """import sys
import ray
try:
    ray.init(address=sys.argv[1], log_to_driver=False)
except Exception as exc:
    print(f"{type(exc).__name__}: {exc}".splitlines()[0])
    sys.exit(1)
ray.shutdown()
"""


def _host_port(address: str) -> tuple[str, int] | None:
    """``HOST:PORT`` split; None for "auto", "ray://…" and the like, which are Ray's to resolve."""
    host, sep, port = address.rpartition(":")
    if not sep or not port.isdigit() or "://" in address:
        return None
    return host.strip("[]"), int(port)


def check_reachable(address: str, timeout_s: float = ANSWER_TIMEOUT_S) -> None:
    """Fail fast on a ``HOST:PORT`` nobody answers at: Ray itself retries for minutes before giving up."""
    where = _host_port(address)
    if where is None:
        return
    try:
        socket.create_connection(where, timeout=timeout_s).close()
    except OSError as exc:
        raise RayUnavailable(f"no Ray cluster answers at {address} ({exc.strerror or exc}): {ADDRESS_HINT}") from None


def check_speaks_ray(address: str, timeout_s: float = ANSWER_TIMEOUT_S) -> None:
    """Fail fast on a ``HOST:PORT`` where something other than Ray answers (a web server, a database, a silent
    port): Ray's cluster address speaks gRPC, so it answers an HTTP/2 greeting with HTTP/2 settings at once.

    Skipped with ``RAY_USE_TLS``, where Ray expects a TLS handshake first; the join (``check_joins``) still decides.
    """
    where = _host_port(address)
    if where is None or os.environ.get("RAY_USE_TLS", "0").lower() in ("1", "true"):
        return
    answer = b""
    try:
        with socket.create_connection(where, timeout=timeout_s) as conn:
            conn.settimeout(timeout_s)
            conn.sendall(HTTP2_GREETING)
            while len(answer) < 9:  # a frame header: length (3 bytes), type, flags, stream (4 bytes)
                chunk = conn.recv(9 - len(answer))
                if not chunk:
                    break
                answer += chunk
    except TimeoutError:
        why = f"it said nothing within {timeout_s:.0f} s"
    except OSError as exc:
        why = f"{exc.strerror or exc}"
    else:
        if len(answer) == 9 and answer[3] == SETTINGS_FRAME and answer[5:] == bytes(4):
            return
        why = "it closed the connection" if not answer else "its answer is not gRPC"
    raise RayUnavailable(f"{address} answers, but not as a Ray cluster ({why}): {ADDRESS_HINT}")


def check_joins(address: str, timeout_s: float = JOIN_TIMEOUT_S) -> None:
    """Join the cluster at ``address`` with a throwaway driver process, as the campaign's driver will.

    A process, not ``ray.init`` here: refused, Ray retries and logs every attempt to stderr for 20 s (a wrong
    token) to many minutes (a port that is not Ray's), and an attempt cannot be stopped in this process. The
    child is killed at the deadline and its logs are only read for the reason.
    """
    try:
        child = subprocess.run([sys.executable, "-c", _JOIN, address], capture_output=True, text=True,
                               stdin=subprocess.DEVNULL, timeout=timeout_s, check=False)
    except subprocess.TimeoutExpired:
        raise RayUnavailable(f"no Ray cluster at {address} let this machine join within {timeout_s:.0f} s: "
                             f"{ADDRESS_HINT}") from None
    if child.returncode == 0:
        return
    if "InvalidAuthToken" in child.stderr:
        raise RayUnavailable(f"the Ray cluster at {address} refused this machine's token (InvalidAuthToken): "
                             "set RAY_AUTH_MODE=token and the cluster's RAY_AUTH_TOKEN here too")
    lines = [line.strip() for line in (child.stdout or child.stderr).splitlines() if line.strip()]
    why = lines[-1] if lines else f"exit status {child.returncode}"
    raise RayUnavailable(f"could not join the Ray cluster at {address}: {why}")


def check_ray(address: str | None) -> None:
    """Before a campaign writes anything: Ray is installed and, given an address, this machine joins the cluster
    there. Each step is bounded: nobody answering is refused within 5 s, something that is not Ray within 5 s
    (at once when it answers), a join that fails or hangs within 30 s."""
    _import_ray()
    if address:
        check_reachable(address)
        check_speaks_ray(address)
        check_joins(address)


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
            check_speaks_ray(self.address)
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
        """Remove the sandboxes of this host whose battle died with its Ray worker or node (Docker containers)."""
        sweep_orphans(self.settings.sandbox)

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
