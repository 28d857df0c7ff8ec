"""The Docker backend: one locked-down container per open sandbox.

The container runs the harness server as PID 1 with its stdin/stdout
attached to this process; every run is a request on that stream, so a run
costs a fork + exec inside the container, not a container start. Limits:
128 MB memory and no swap, half a CPU, 50 pids, no network, read-only root,
size-limited tmpfs for work, uid 65534, no capabilities, no-new-privileges,
no logging driver (output is capped by the harness), removed on close.
"""

from __future__ import annotations

import contextlib
import os
import socket
import struct
import threading
from types import TracebackType
from typing import Any

from logomesh.sandbox.base import (
    DEFAULT_LIMITS,
    Backend,
    Limits,
    SandboxUnavailable,
)
from logomesh.sandbox.client import HarnessClient, HarnessRuns, server_argv
from logomesh.sandbox.image import SANDBOX_USER, image_tag
from logomesh.sandbox.setting import ROOTS

BUILD_HINT = "run: logomesh sandbox build --offline"
WORK_DIR = "/work"


def docker_client() -> Any:
    """A connected docker SDK client, or SandboxUnavailable naming the fix."""
    try:
        import docker
    except ImportError:
        raise SandboxUnavailable("the docker Python package is missing: pip install docker") from None
    try:
        client = docker.from_env(timeout=60)
        client.ping()
    except Exception:
        raise SandboxUnavailable(
            "Docker is not running or not reachable: start it (dockerd / systemctl start docker)"
            " or use --sandbox bwrap"
        ) from None
    return client


OWNER_LABEL = "logomesh.owner"


def _owner() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


RUN_LABEL = "logomesh.run"
RUN_ENV = "LOGOMESH_SANDBOX_RUN"


def _labels() -> dict[str, str]:
    """Every container is ours (``logomesh.sandbox``) and its owner's; ``$LOGOMESH_SANDBOX_RUN`` adds a run label,
    so a test can count its own containers on a host where others run battles too."""
    labels = {"logomesh.sandbox": "1", OWNER_LABEL: _owner()}
    if os.environ.get(RUN_ENV):
        labels[RUN_LABEL] = os.environ[RUN_ENV]
    return labels


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def remove_orphans() -> int:
    """Remove sandbox containers whose owning process on this host is gone; how many were removed.

    A battle process killed with SIGKILL cannot remove its container; one killed
    between create and start leaves it in "created", where auto-remove never
    applies. Campaigns call this when they start and when their workers stop.
    """
    try:
        client = docker_client()
    except SandboxUnavailable:
        return 0
    removed = 0
    try:
        for container in client.containers.list(all=True, filters={"label": "logomesh.sandbox=1"}):
            host, _, pid = str(container.labels.get(OWNER_LABEL, "")).partition(":")
            if host != socket.gethostname() or not pid.isdigit() or _alive(int(pid)):
                continue
            with contextlib.suppress(Exception):
                container.remove(force=True)
                removed += 1
    except Exception:
        return removed
    finally:
        client.close()
    return removed


class DockerSandbox(HarnessRuns):
    def __init__(self, tag: str | None = None, limits: Limits = DEFAULT_LIMITS) -> None:
        self._tag = tag or image_tag()
        self._limits = limits
        self._client = docker_client()
        try:
            image = self._client.images.get(self._tag)
        except Exception:
            self._client.close()
            raise SandboxUnavailable(f"sandbox image {self._tag} is missing: {BUILD_HINT}") from None
        self._image_id: str = image.id
        self._container: Any = None
        self._sock: socket.socket | None = None
        self._attached: Any = None  # the SDK's socket wrapper: it keeps the HTTP response (and so our socket) alive
        self._start()

    @property
    def backend(self) -> Backend:
        return "docker"

    @property
    def image_id(self) -> str:
        return self._image_id

    @property
    def container_id(self) -> str:
        return str(self._container.id) if self._container is not None else ""

    def _start(self) -> None:
        limits = self._limits
        mem = limits.memory_bytes
        tmpfs_opts = f"uid=65534,gid=65534,size={limits.tmpfs_bytes}"
        try:
            self._container = self._client.containers.create(
                self._image_id,
                command=server_argv("python3", WORK_DIR, limits),  # /usr/bin (offline) or /usr/local/bin (slim)
                stdin_open=True,
                tty=False,
                network_mode="none",
                mem_limit=mem,
                memswap_limit=mem,
                nano_cpus=limits.nano_cpus,
                pids_limit=limits.pids,
                read_only=True,
                tmpfs={WORK_DIR: tmpfs_opts, "/tmp": f"uid=65534,gid=65534,size={8 * 1024 * 1024}",
                       **dict.fromkeys(ROOTS, tmpfs_opts)},  # an ordinary setting's folder (setting.py)
                user=SANDBOX_USER,
                cap_drop=["ALL"],
                security_opt=["no-new-privileges"],
                working_dir=WORK_DIR,
                log_config={"type": "none", "config": {}},
                labels=_labels(),
                auto_remove=True,
                ipc_mode="private",
            )
            raw = self._client.api.attach_socket(
                self._container.id, params={"stdin": 1, "stdout": 1, "stderr": 1, "stream": 1}
            )
            # Hold the wrapper, not only its socket: docker-py parks the HTTP response on it ("to stop it
            # being garbage collected"), and the response owns the connection whose socket is ours. Holding
            # only ``raw._sock`` made the first send fail with EBADF in Ray workers (3 of 3 runs: every
            # hidden test of a good submission lost to "Bad file descriptor"); holding it, 3 of 3 passed.
            self._attached = raw
            self._sock = raw._sock
            self._container.start()
        except SandboxUnavailable:
            raise
        except Exception as exc:
            self.close()
            first = str(exc).splitlines()[0][:200] if str(exc) else type(exc).__name__
            raise SandboxUnavailable(f"could not start the sandbox container: {first}") from None
        self._harness = HarnessClient(self._send, self._kill, limits)
        self._reader = threading.Thread(target=self._read_loop, name="logomesh-docker-reader", daemon=True)
        self._reader.start()
        try:
            self._harness.wait_ready()
        except SandboxUnavailable:
            self.close()
            raise

    # -- transport ---------------------------------------------------------------------------------
    def _send(self, data: bytes) -> None:
        if self._sock is None:
            raise OSError("not attached")
        self._sock.sendall(data)

    def _kill(self) -> None:
        if self._container is not None:
            with contextlib.suppress(Exception):
                self._container.kill()

    def _read_loop(self) -> None:
        """Demultiplex Docker's attach stream (8-byte frame headers) into lines for the client."""
        sock = self._sock
        assert sock is not None
        buf = b""
        pending = b""
        try:
            while True:
                chunk = sock.recv(65536)
                if not chunk:
                    break
                buf += chunk
                while len(buf) >= 8:
                    kind, size = struct.unpack(">BxxxL", buf[:8])
                    if len(buf) < 8 + size:
                        break
                    payload, buf = buf[8 : 8 + size], buf[8 + size :]
                    if kind != 1:
                        self._harness.feed_stderr(payload)  # the server's own stderr: diagnosis only
                        continue
                    pending += payload
                    *lines, pending = pending.split(b"\n")
                    for line in lines:
                        self._harness.feed_line(line)
        except OSError:
            pass
        finally:
            self._harness.feed_eof()

    def close(self) -> None:
        if self._sock is not None:
            try:
                self._sock.shutdown(socket.SHUT_RDWR)
                self._sock.close()
            except OSError:
                pass
            self._sock = None
            self._attached = None
        if self._container is not None:
            with contextlib.suppress(Exception):
                self._container.remove(force=True)
            self._container = None
        self._client.close()

    def __enter__(self) -> DockerSandbox:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()
