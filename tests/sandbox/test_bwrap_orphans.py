"""A SIGKILLed bubblewrap battle leaves no cgroup directory behind once the next box starts."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from logomesh.sandbox import cgroup

pytestmark = pytest.mark.bwrap

_HOLD_A_BOX = (
    "import json, sys, time\n"
    "from logomesh.sandbox.bwrap import BwrapSandbox\n"
    "box = BwrapSandbox()\n"
    "print(json.dumps([str(d) for d in box.cgroup_dirs]), flush=True)\n"
    "time.sleep(600)\n"
)


def _members(directory: Path) -> list[str]:
    try:
        return (directory / "cgroup.procs").read_text().split()
    except OSError:
        return []


def test_cgroups_of_a_sigkilled_box_are_swept_by_the_next_box() -> None:
    from logomesh.sandbox.bwrap import BwrapSandbox

    holder = subprocess.Popen([sys.executable, "-c", _HOLD_A_BOX], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None
        left = [Path(p) for p in json.loads(holder.stdout.readline())]
    finally:
        holder.send_signal(signal.SIGKILL)
        holder.wait(timeout=30)
    if not left:
        pytest.skip("no writable cgroup on this host: the box runs on rlimits only")
    assert all(d.is_dir() for d in left)  # the killed process could not remove them
    deadline = time.monotonic() + 60  # a hang guard: returns as soon as bwrap, which dies with its parent, is gone
    while any(_members(d) for d in left) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert all(str(holder.pid) in d.name for d in left)

    with BwrapSandbox() as box:
        mine = box.cgroup_dirs
        assert [d for d in left if d.exists()] == []
        assert all(d.is_dir() for d in mine)  # the sweep left the live box's own directories alone
        assert box.run_suite("VALUE = 1\n", {"test_v.py": "import unittest\nfrom solution import VALUE\n\n\n"
                                             "class T(unittest.TestCase):\n    def test_v(self):\n"
                                             "        self.assertEqual(VALUE, 1)\n"}).passed == 1
    assert all(not d.exists() for d in mine)


def test_the_doctor_sweeps_too() -> None:
    parents = cgroup._parents(cgroup.ROOT, cgroup._read_own_paths() or {})
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    made: list[Path] = []
    for parent in parents:
        directory = parent / cgroup.owned_name(int(dead.stdout))
        try:
            directory.mkdir()
        except OSError:
            pytest.skip(f"no writable cgroup under {parent}")
        made.append(directory)
    if not made:
        pytest.skip("no cgroup parent on this host")
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    proc = subprocess.run([sys.executable, "-m", "logomesh", "sandbox", "doctor"], capture_output=True, text=True,
                          timeout=300, env=env)
    assert all(not d.exists() for d in made), proc.stderr
    swept = re.search(r"removed (\d+) empty cgroup directories", proc.stderr)
    assert swept is not None and int(swept.group(1)) >= len(made), proc.stderr  # others' orphans count too
