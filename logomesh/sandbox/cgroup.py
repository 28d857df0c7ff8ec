"""A cgroup for a bubblewrap sandbox, where this host lets us make one (best effort).

With a writable cgroup the bubblewrap box gets the same memory, pids and CPU
limits as the Docker container; without one it keeps its rlimits only. Both
cgroup v2 (one unified tree) and v1 (one tree per controller) are handled.
``create`` returns None rather than failing: a missing cgroup is reported by
``sandbox doctor``, never a reason to refuse to run.
"""

from __future__ import annotations

import contextlib
import os
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

from logomesh.sandbox.base import Limits

ROOT = Path("/sys/fs/cgroup")
CPU_PERIOD_US = 100_000


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


def create(limits: Limits, root: Path = ROOT) -> Cgroup | None:
    """A fresh cgroup with ``limits`` under ours, or None when the host does not allow it."""
    try:
        paths = _own_paths(Path("/proc/self/cgroup").read_text())
    except OSError:
        return None
    name = f"logomesh-{uuid.uuid4().hex[:12]}"
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
