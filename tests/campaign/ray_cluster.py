"""A Ray cluster of separate ``ray start`` nodes on loopback, for tests that kill one of them.

Each node is ``ray start --block`` in its own session (process group), so a
test can kill a node, raylet and worker processes alike, with one ``killpg``;
every group started here is killed on exit, whatever happened. Every port is
one picked free at run time, every address is 127.0.0.1, the cluster has its
own token (Ray's token authentication) and its own temporary folder.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

RAY = str(Path(sys.executable).with_name("ray"))
# ``ray start`` for a node that joins a cluster on loopback. Ray refuses to join one when told the host
# is a lone machine (RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0, which keeps the head and the driver on
# 127.0.0.1), and otherwise replaces 127.0.0.1 with the host's routable address: keep the address given.
JOIN_ON_LOOPBACK = ("import sys; import ray._private.services as services; "
                    "services.resolve_ip_for_localhost = lambda host: host; "
                    "from ray.scripts.scripts import main; sys.argv[0] = 'ray'; sys.exit(main())")
OBJECT_STORE_BYTES = 80 * 1024 * 1024  # Ray's minimum is 75 MiB
STARTED = b"Ray runtime started"
# The head's health checks of the other nodes: a node missing 3 checks 0.5 s apart is dead (Ray's defaults,
# every 3 s and 5 misses of up to 10 s each, take about a minute to give up on a killed node).
FAST_NODE_DEATH = {"RAY_health_check_period_ms": "500", "RAY_health_check_timeout_ms": "1000",
                   "RAY_health_check_failure_threshold": "3"}


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def _port_options(head: bool) -> list[str]:
    options = ["--node-manager-port", "--object-manager-port", "--runtime-env-agent-port", "--metrics-export-port",
               "--dashboard-agent-listen-port", "--dashboard-agent-grpc-port"]
    if head:
        options.append("--dashboard-port")
    pinned = [arg for option in options for arg in (option, str(free_port()))]
    return [*pinned, "--worker-port-list", ",".join(str(free_port()) for _ in range(4))]


@dataclass
class Node:
    name: str
    process: subprocess.Popen[bytes]
    log: Path

    def started(self) -> bool:
        return STARTED in self.log.read_bytes()

    def processes(self) -> list[tuple[int, str]]:
        """(pid, command line) of every live process of this node: its session, raylet, agents and workers.

        Ray puts each worker in a process group of its own, but they all stay in the node's session.
        """
        found: list[tuple[int, str]] = []
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            try:
                if os.getsid(int(entry.name)) != self.process.pid:
                    continue
                command = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace").strip()
            except OSError:
                continue
            if command:  # a zombie has none
                found.append((int(entry.name), command))
        return found

    def kill(self) -> None:
        """SIGKILL every process of the node at once, as a machine that lost power would stop."""
        for pid, _ in self.processes():
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait(timeout=30)


@dataclass
class Cluster:
    root: Path
    env: dict[str, str]
    port: int = field(default_factory=free_port)
    nodes: list[Node] = field(default_factory=list)

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    def start_node(self, name: str, head: bool, timeout_s: float = 120.0) -> Node:
        launcher = [RAY] if head else [sys.executable, "-c", JOIN_ON_LOOPBACK]
        args = [*launcher, "start", "--block", "--node-ip-address", "127.0.0.1", "--num-cpus", "1",
                "--object-store-memory", str(OBJECT_STORE_BYTES), "--disable-usage-stats", *_port_options(head)]
        if head:
            args += ["--head", "--port", str(self.port), "--include-dashboard", "false",
                     "--temp-dir", str(self.root / "ray")]
        else:
            args += ["--address", self.address]
        log = self.root / f"{name}.log"
        env = self.env if head else {**self.env, "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "1"}
        with log.open("wb") as out:
            process = subprocess.Popen(args, env=env, stdout=out, stderr=subprocess.STDOUT,
                                       stdin=subprocess.DEVNULL, start_new_session=True)
        node = Node(name, process, log)
        self.nodes.append(node)
        _wait_for(node, timeout_s)
        return node

    def stop(self) -> None:
        for node in reversed(self.nodes):
            node.kill()


def _wait_for(node: Node, timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    while not node.started():
        if node.process.poll() is not None or time.monotonic() > deadline:
            raise RuntimeError(f"Ray node {node.name} did not start:\n{node.log.read_text(errors='replace')[-3000:]}")
        time.sleep(0.2)


def cluster_env(root: Path, extra: Mapping[str, str]) -> dict[str, str]:
    """The environment of every node and of the driver: this checkout first on the path, one token for all.

    ``RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0`` stops Ray from replacing 127.0.0.1 with the host's
    routable address (what it does for a real cluster) in the head node and the driver.
    """
    checkout = str(Path(__file__).resolve().parents[2])
    path = os.pathsep.join(p for p in (checkout, os.environ.get("PYTHONPATH", "")) if p)
    return {**os.environ, **extra, **FAST_NODE_DEATH, "PYTHONPATH": path, "RAY_USAGE_STATS_ENABLED": "0",
            "RAY_AUTH_MODE": "token",
            "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0", "RAY_AUTH_TOKEN": secrets.token_hex(32), "TMPDIR": str(root)}


@contextmanager
def two_node_cluster(root: Path, extra_env: Mapping[str, str]) -> Iterator[tuple[Cluster, Node]]:
    """A head node and a worker node, one CPU each; yields the cluster and the worker node to kill."""
    root.mkdir(parents=True, exist_ok=True)
    cluster = Cluster(root, cluster_env(root, extra_env))
    try:
        cluster.start_node("head", head=True)
        yield cluster, cluster.start_node("worker", head=False)
    finally:
        cluster.stop()
