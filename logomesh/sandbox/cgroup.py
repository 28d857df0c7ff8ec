"""A cgroup for a bubblewrap sandbox, where this host lets us make one (best effort).

With a writable cgroup the bubblewrap box gets the same memory, pids and CPU
limits as the Docker container; without one it keeps its rlimits only. Both
cgroup v2 (one unified tree) and v1 (one tree per controller) are handled.
``create`` returns None rather than failing: a missing cgroup is reported by
``sandbox doctor``, never a reason to refuse to run.

A process killed with SIGKILL cannot remove its cgroup directories, so each
directory is named for its owner: ``logomesh-<pid namespace>-<pid>-<start
time>-<random>``. ``sweep_orphans`` (run when a bubblewrap box starts and by
``sandbox doctor``) removes the empty ones whose owner is gone, the way
``docker.remove_orphans`` removes containers; the start time tells a dead
owner from a new process that reused its pid.
"""

from __future__ import annotations

import contextlib
import os
import re
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

from logomesh.sandbox.base import Limits

ROOT = Path("/sys/fs/cgroup")
CPU_PERIOD_US = 100_000
V1_CONTROLLERS = ("memory", "pids", "cpu")
_OWNED_NAME = re.compile(r"^logomesh-(\d+)-(\d+)-(\d+)-[0-9a-f]{8}$")


def _own_paths(proc_cgroup: str) -> dict[str, str]:
    """Controller (``""`` for v2) -> our cgroup path, from /proc/self/cgroup."""
    paths: dict[str, str] = {}
    for line in proc_cgroup.splitlines():
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        for controller in parts[1].split(",") if parts[1] else [""]:
            paths[controller] = parts[2]
    return paths


def _pid_namespace() -> str:
    """The inode of our pid namespace: a pid means something only inside it."""
    try:
        return "".join(ch for ch in os.readlink("/proc/self/ns/pid") if ch.isdigit()) or "0"
    except OSError:
        return "0"


def _start_time(pid: int) -> str | None:
    """When ``pid`` started (clock ticks since boot, /proc/PID/stat field 22); None if there is no such process."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = stat[stat.rfind(")") + 2:].split()  # the command name may hold spaces and parentheses
    return fields[19] if len(fields) > 19 else None


def owned_name(pid: int | None = None) -> str:
    """A fresh directory name that says which process owns it."""
    owner = os.getpid() if pid is None else pid
    return f"logomesh-{_pid_namespace()}-{owner}-{_start_time(owner) or 0}-{uuid.uuid4().hex[:8]}"


def _orphaned(name: str, namespace: str) -> bool:
    """Whether ``name`` is an owned directory of our pid namespace whose owner is gone."""
    match = _OWNED_NAME.match(name)
    if match is None or match.group(1) != namespace:
        return False
    return _start_time(int(match.group(2))) != match.group(3)


def orphaned(name: str) -> bool:
    """Whether ``name`` (made by ``owned_name``) belongs to a process of our pid namespace that is gone."""
    return _orphaned(name, _pid_namespace())


def _write(path: Path, value: str) -> None:
    path.write_text(value, encoding="ascii")


@dataclass
class Cgroup:
    dirs: list[Path]  # one per v1 controller, or the single v2 directory
    version: int

    @property
    def procs_files(self) -> list[Path]:
        return [d / "cgroup.procs" for d in self.dirs]

    def wrap(self, argv: list[str]) -> list[str]:
        """``argv`` started inside this cgroup: a shell joins it, then execs (same pid, no race)."""
        joins = " && ".join(f"echo $$ > '{p}'" for p in self.procs_files)
        return ["/bin/sh", "-c", f'{joins} && exec "$@"', "logomesh-cgroup", *argv]

    def remove(self) -> None:
        """Remove the directories once their processes are gone (retrying briefly)."""
        for directory in self.dirs:
            for _ in range(50):
                try:
                    directory.rmdir()
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    _kill_members(directory)
                    time.sleep(0.02)


def _kill_members(directory: Path) -> None:
    with contextlib.suppress(OSError):
        for pid in (directory / "cgroup.procs").read_text().split():
            with contextlib.suppress(OSError):
                os.kill(int(pid), 9)


def _read_own_paths() -> dict[str, str] | None:
    try:
        return _own_paths(Path("/proc/self/cgroup").read_text())
    except OSError:
        return None


def _parents(root: Path, paths: dict[str, str]) -> list[Path]:
    """The directories our sandbox cgroups are made in: one for v2, one per controller for v1."""
    if (root / "cgroup.controllers").is_file():
        return [root / paths.get("", "/").lstrip("/")]
    return [root / c / paths[c].lstrip("/") for c in V1_CONTROLLERS if c in paths]


def sweep_orphans(root: Path = ROOT, paths: dict[str, str] | None = None) -> list[Path]:
    """Remove the empty sandbox cgroups under ours whose owner died; the directories removed.

    Only directories named by ``owned_name`` in our pid namespace are touched,
    and only with ``rmdir``, which the kernel refuses for a cgroup that still
    holds a process: a live sandbox is never swept.
    """
    own = _read_own_paths() if paths is None else paths
    if own is None:
        return []
    namespace = _pid_namespace()
    removed: list[Path] = []
    for parent in _parents(root, own):
        try:
            candidates = sorted(parent.glob("logomesh-*"))
        except OSError:
            continue
        for directory in candidates:
            if _orphaned(directory.name, namespace):
                with contextlib.suppress(OSError):
                    directory.rmdir()
                    removed.append(directory)
    return removed


def create(limits: Limits, root: Path = ROOT) -> Cgroup | None:
    """A fresh cgroup with ``limits`` under ours, or None when the host does not allow it."""
    paths = _read_own_paths()
    if paths is None:
        return None
    name = owned_name()
    if (root / "cgroup.controllers").is_file():
        return _create_v2(root, paths.get("", "/"), name, limits)
    return _create_v1(root, paths, name, limits)


def _create_v2(root: Path, own: str, name: str, limits: Limits) -> Cgroup | None:
    parent = root / own.lstrip("/")
    directory = parent / name
    try:
        enabled = (parent / "cgroup.subtree_control").read_text().split()
        if not {"memory", "pids"} <= set(enabled):
            return None
        directory.mkdir()
    except OSError:
        return None
    group = Cgroup([directory], 2)
    try:
        _write(directory / "memory.max", str(limits.memory_bytes))
        with contextlib.suppress(OSError):
            _write(directory / "memory.swap.max", "0")
        _write(directory / "pids.max", str(limits.pids))
        if "cpu" in enabled:
            quota = limits.nano_cpus * CPU_PERIOD_US // 1_000_000_000
            _write(directory / "cpu.max", f"{quota} {CPU_PERIOD_US}")
    except OSError:
        group.remove()
        return None
    return group


def _create_v1(root: Path, paths: dict[str, str], name: str, limits: Limits) -> Cgroup | None:
    settings: dict[str, list[tuple[str, str]]] = {
        "memory": [("memory.limit_in_bytes", str(limits.memory_bytes))],
        "pids": [("pids.max", str(limits.pids))],
        "cpu": [
            ("cpu.cfs_period_us", str(CPU_PERIOD_US)),
            ("cpu.cfs_quota_us", str(limits.nano_cpus * CPU_PERIOD_US // 1_000_000_000)),
        ],
    }
    made: list[Path] = []
    try:
        for controller, values in settings.items():
            if controller not in paths:
                raise OSError(f"no {controller} controller")
            directory = root / controller / paths[controller].lstrip("/") / name
            directory.mkdir()
            made.append(directory)
            for file_name, value in values:
                _write(directory / file_name, value)
            if controller == "memory":
                with contextlib.suppress(OSError):  # only with swap accounting
                    _write(directory / "memory.memsw.limit_in_bytes", str(limits.memory_bytes))
    except OSError:
        Cgroup(made, 1).remove()
        return None
    return Cgroup(made, 1)
