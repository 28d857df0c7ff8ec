"""The bubblewrap backend: what the box can see and who it runs as."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator

import pytest

from logomesh.sandbox import Sandbox, open_sandbox
from logomesh.sandbox.image import PYTHON_VERSION, image_tag, root_dir

from .suites import ADD_TESTS, GOOD_ADD, WRONG_ADD

pytestmark = pytest.mark.bwrap


@pytest.fixture(scope="module")
def box() -> Iterator[Sandbox]:
    sandbox = open_sandbox("bwrap")
    yield sandbox
    sandbox.close()


def test_scores_like_docker(box: Sandbox) -> None:
    assert box.backend == "bwrap" and box.image_id.startswith(f"bwrap:{image_tag()}:python-{PYTHON_VERSION}.")
    assert box.run_suite(GOOD_ADD, ADD_TESTS).passed == 4
    assert box.run_suite(WRONG_ADD, ADD_TESTS).passed == 3


def test_runs_as_nobody_in_its_own_namespaces(box: Sandbox) -> None:
    probe = (
        "import json, os, socket, resource\n"
        "print(os.getuid(), os.getgid())\n"
        "print(socket.gethostname())\n"
        "print(json.dumps(sorted(os.listdir('/'))))\n"
        "print(json.dumps(sorted(n for _, n in socket.if_nameindex())))\n"
        "print(resource.getrlimit(resource.RLIMIT_DATA)[0], resource.getrlimit(resource.RLIMIT_CPU)[0])\n"
        "print(os.environ.get('HOME'), os.environ.get('PATH'))\n"
    )
    run = box.run_script({}, probe)
    lines = run.stdout.splitlines()
    assert run.exit_code == 0, run
    assert lines[0] == "65534 65534"
    assert re.fullmatch("[0-9a-f]{12}", lines[1])  # as a container's id names a Docker box: no name of ours
    visible = set(json.loads(lines[2]))
    assert visible == set(os.listdir(root_dir()))  # the image's own root, as in Docker; nothing of the host's
    assert {"usr", "work", "tmp", "proc", "dev"} <= visible
    assert json.loads(lines[3]) == ["lo"]
    assert lines[4] == f"{512 * 1024 * 1024} 120"
    assert lines[5].startswith("/work/") and lines[5].endswith("/usr/local/bin:/usr/bin:/bin")


def test_cgroup_limits_where_the_host_allows_one(box: Sandbox) -> None:
    from logomesh.sandbox.bwrap import BwrapSandbox

    assert isinstance(box, BwrapSandbox)
    if not box.cgroup_dirs:
        assert box.limits_note == "rlimits only (no writable cgroup)"
        pytest.skip("no writable cgroup on this host: the box runs on rlimits only")
    values = {}
    for directory in box.cgroup_dirs:
        for name in ("memory.max", "memory.limit_in_bytes", "pids.max", "cpu.max", "cpu.cfs_quota_us"):
            if (directory / name).is_file():
                values[name] = (directory / name).read_text().split()[0]
        members = (directory / "cgroup.procs").read_text().split()
        assert len(members) >= 2  # bubblewrap and the harness at least
    assert values.get("memory.max", values.get("memory.limit_in_bytes")) == str(128 * 1024 * 1024)
    assert values["pids.max"] == "50"
    assert values.get("cpu.max", values.get("cpu.cfs_quota_us")) == "50000"  # half of a 100 ms period


def test_cgroup_is_removed_on_close() -> None:
    from logomesh.sandbox.bwrap import BwrapSandbox

    sandbox = BwrapSandbox()
    dirs = sandbox.cgroup_dirs
    sandbox.close()
    assert all(not d.exists() for d in dirs)
