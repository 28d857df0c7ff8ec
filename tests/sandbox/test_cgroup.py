"""cgroup v2 setup and the orphan sweep against a fake cgroup tree (v1 runs for real in the bwrap tests)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from logomesh.sandbox import cgroup
from logomesh.sandbox.base import Limits


def fake_v2_root(tmp_path: Path, controllers: str) -> Path:
    (tmp_path / "cgroup.controllers").write_text(controllers)
    (tmp_path / "cgroup.subtree_control").write_text(controllers)
    return tmp_path


def test_v2_group_gets_docker_figures(tmp_path: Path) -> None:
    root = fake_v2_root(tmp_path, "cpu memory pids")
    paths = cgroup._own_paths("0::/\n")
    group = cgroup._create_v2(root, paths[""], "logomesh-test", Limits())
    assert group is not None and group.version == 2
    directory = group.dirs[0]
    assert (directory / "memory.max").read_text() == str(128 * 1024 * 1024)
    assert (directory / "memory.swap.max").read_text() == "0"
    assert (directory / "pids.max").read_text() == "50"
    assert (directory / "cpu.max").read_text() == "50000 100000"
    wrapped = group.wrap(["bwrap", "--x"])
    assert wrapped[:2] == ["/bin/sh", "-c"] and wrapped[-2:] == ["bwrap", "--x"]
    assert f"echo $$ > '{directory / 'cgroup.procs'}'" in wrapped[2]


def test_v2_without_delegated_controllers_is_none(tmp_path: Path) -> None:
    root = fake_v2_root(tmp_path, "cpu")
    assert cgroup._create_v2(root, "/", "logomesh-test", Limits()) is None
    assert not (root / "logomesh-test").exists()


def test_own_paths_reads_both_versions() -> None:
    text = "9:name=systemd:/\n4:memory:/process_api/abc\n1:cpu,cpuacct:/x\n0::/user.slice\n"
    assert cgroup._own_paths(text) == {
        "name=systemd": "/",
        "memory": "/process_api/abc",
        "cpu": "/x",
        "cpuacct": "/x",
        "": "/user.slice",
    }


def _dead_pid() -> int:
    done = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    return int(done.stdout)


def test_names_say_who_owns_them() -> None:
    name = cgroup.owned_name()
    assert f"-{os.getpid()}-" in name
    assert not cgroup._orphaned(name, cgroup._pid_namespace())
    assert cgroup._orphaned(cgroup.owned_name(_dead_pid()), cgroup._pid_namespace())


def test_sweep_removes_empty_orphans_of_dead_owners_only(tmp_path: Path) -> None:
    root = fake_v2_root(tmp_path, "cpu memory pids")
    (root / "inner").mkdir()
    paths = {"": "/inner"}
    namespace = cgroup._pid_namespace()
    orphan = root / "inner" / cgroup.owned_name(_dead_pid())
    live = root / "inner" / cgroup.owned_name()
    pid_reused = root / "inner" / f"logomesh-{namespace}-{os.getpid()}-1-0123abcd"  # our pid, another start time
    other_namespace = root / "inner" / f"logomesh-1{namespace}-{_dead_pid()}-5-0123abcd"
    unattributed = root / "inner" / "logomesh-0123456789ab"  # made before owners were named: left alone
    busy = root / "inner" / cgroup.owned_name(_dead_pid())
    for directory in (orphan, live, pid_reused, other_namespace, unattributed, busy):
        directory.mkdir()
    (busy / "cgroup.procs").write_text("4242\n")  # a real cgroup with a process refuses rmdir; so does this
    removed = cgroup.sweep_orphans(root, paths)
    assert sorted(removed) == sorted([orphan, pid_reused])
    assert all(d.is_dir() for d in (live, other_namespace, unattributed, busy))
