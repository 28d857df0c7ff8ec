"""cgroup v2 setup against a fake cgroup tree (the v1 path runs for real in the bwrap tests)."""

from __future__ import annotations

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
