"""Time bounds name their clock, and the CPU clock is read from the kernel, outside the code's process.

A hidden test's ``@within(..., clock="cpu")`` bounds the CPU time of the
code's process (all its threads, and the children it reaped), which the
harness server reads from ``/proc/<pid>/stat`` before and after the test:
waiting is no work, work in a thread or a child is work, and code that
rewrites its own clocks (``time.process_time``, ``os.times``) changes
nothing. ``clock="wall"`` bounds the wall time, where waiting is the point.
Both backends.
"""

from __future__ import annotations

import pytest
from tiers import sampled

from logomesh.sandbox import Sandbox
from logomesh.sandbox.discover import timing_bounds
from logomesh.sandbox.verdict import judge_suite

CODE = '''
import os, threading, time


def _burn(seconds):
    start = sum(os.times()[:2])
    while sum(os.times()[:2]) - start < seconds:
        pass


def wait(seconds):
    time.sleep(seconds)
    return 1


def work(seconds):
    _burn(seconds)
    return 1


def work_in_thread(seconds):
    worker = threading.Thread(target=_burn, args=(seconds,))
    worker.start()
    worker.join()
    return 1


def work_in_child(seconds):
    pid = os.fork()
    if pid == 0:
        _burn(seconds)
        os._exit(0)
    os.waitpid(pid, 0)
    return 1
'''
# The same code with every clock of its own process rewritten to read zero (it burns by a copy of the real one):
# the server's reading is the kernel's.
CLOCKS_REWRITTEN = CODE + '''

import resource
_real_times = os.times


def _burn(seconds):
    start = sum(_real_times()[:2])
    while sum(_real_times()[:2]) - start < seconds:
        pass


time.process_time = time.thread_time = lambda: 0.0
os.times = lambda: os.times_result((0.0, 0.0, 0.0, 0.0, _real_times()[4]))
resource.getrusage = lambda who: resource.struct_rusage((0.0,) * 16)
'''
DRIVER = '''
from observe import see, within
from solution import wait, work, work_in_child, work_in_thread


@within(max_s=0.3, clock="cpu")
def test_waiting_is_no_work():
    see(wait(0.6))


@within(max_s=0.3, clock="cpu")
def test_work_is_counted():
    see(work(0.6))


@within(max_s=0.3, clock="cpu")
def test_work_in_a_thread_is_counted():
    see(work_in_thread(0.6))


@within(max_s=0.3, clock="cpu")
def test_work_in_a_reaped_child_is_counted():
    see(work_in_child(0.6))


@within(max_s=0.3, clock="wall")
def test_waiting_counts_on_the_wall_clock():
    see(wait(0.6))
'''
EXPECTED = {
    "test_clock.test_waiting_is_no_work": ("passed", ""),
    "test_clock.test_work_is_counted": ("failed", "of CPU time, read from the kernel, at most 0.3 s allowed"),
    "test_clock.test_work_in_a_thread_is_counted": ("failed", "of CPU time, read from the kernel"),
    "test_clock.test_work_in_a_reaped_child_is_counted": ("failed", "of CPU time, read from the kernel"),
    "test_clock.test_waiting_counts_on_the_wall_clock": ("failed", "of wall time, at most 0.3 s allowed"),
}


@pytest.mark.parametrize("code", sampled([CODE, CLOCKS_REWRITTEN], ["honest", "clocks rewritten"],
                                         keep={"clocks rewritten"}))
def test_each_bound_is_read_on_the_clock_it_names(box: Sandbox, code: str) -> None:
    drivers = {"test_clock.py": DRIVER}
    reference = box.observe_suite(CODE, drivers, timeout_s=60)
    run = judge_suite(box.observe_suite(code, drivers, timeout_s=60), reference, timing_bounds(drivers))
    got = {o.name: o for o in run.outcomes}
    assert set(got) == set(EXPECTED)
    for name, (status, says) in EXPECTED.items():
        assert got[name].status == status, (name, got[name].reason)
        assert says in got[name].reason, (name, got[name].reason)
