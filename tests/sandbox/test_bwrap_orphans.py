"""A SIGKILLed bubblewrap battle leaves no cgroup directory behind once the next box starts."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
import uuid
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
    """The doctor runs in a cgroup of the test's own, where only it sweeps.

    Every bubblewrap box sweeps its parent cgroup when it starts, so with the doctor in the shared one, a box
    of another test worker (or of any logomesh on the host) could sweep these orphans first: they were gone,
    and the doctor said nothing. A box sweeps only the direct children of its own cgroup that are named
    ``logomesh-*``, so nothing but the doctor reaches orphans made one level below a ``doctor-test-*`` group.
    """
    parents = cgroup._parents(cgroup.ROOT, cgroup._read_own_paths() or {})
    if not parents:
        pytest.skip("no cgroup parent on this host")
    version = 2 if (cgroup.ROOT / "cgroup.controllers").is_file() else 1
    private = cgroup.Cgroup([], version)
    for parent in parents:
        directory = parent / f"doctor-test-{uuid.uuid4().hex[:8]}"
        try:
            directory.mkdir()
        except OSError:
            private.remove()
            pytest.skip(f"no writable cgroup under {parent}")
        private.dirs.append(directory)
    made: list[Path] = []
    try:
        if subprocess.run(private.wrap(["true"]), capture_output=True).returncode != 0:
            pytest.skip("this host does not let a process join a cgroup the test made")
        dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
        for directory in private.dirs:
            made.append(directory / cgroup.owned_name(int(dead.stdout)))
            made[-1].mkdir()
        env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
        proc = subprocess.run(private.wrap([sys.executable, "-m", "logomesh", "sandbox", "doctor"]),
                              capture_output=True, text=True, timeout=300, env=env)
        assert all(not d.exists() for d in made), proc.stderr
        swept = re.search(r"removed (\d+) empty cgroup directories", proc.stderr)
        assert swept is not None and int(swept.group(1)) == len(made), proc.stderr  # none but ours are in reach
    finally:  # nothing sweeps a doctor-test-* group: whatever a failure left in it goes with it
        cgroup.Cgroup([child for d in private.dirs for child in d.glob("logomesh-*")], version).remove()
        private.remove()
