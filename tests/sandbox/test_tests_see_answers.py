"""The purple agent's tests learn what the code answers, never the code itself (issue 31), on both backends.

Its tests are judged as mutation testing judges tests (``scoring/testing.py``): a test counts when it passes on
the task's reference, and a flawed variant is caught when a counted test fails on it. The reference and the
variants are public. A test that could read the code under test (its text, its bytecode, the lines of its frames)
would pass on the reference's text alone and "catch" every variant without testing anything. So the code runs
in a process of its own, from text that never exists as a file, non-dumpable before the tests' process starts,
and the tests reach it only over the wire, which hands out only what the code defines (``wire.reachable``).

Each attack here is beside its control: honest tests that use what tests normally use (custom exception classes,
``mock.patch`` of the code's clock, properties, threads, generators) still pass, and honest tests of a real task
still catch its variants. Private names are refused like the interpreter's own: whether a helper or an attribute
exists tells one implementation from another without running it.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json

import pytest

from logomesh.sandbox import Sandbox, SuiteRun
from logomesh.scoring.testing import PURPLE_TEST_FILE, MutantReport, judge_mutants, task_interface
from logomesh.tasks import load_task


@pytest.fixture(scope="module")
def box(either_box: Sandbox) -> Sandbox:
    return either_box


# The code carries a marker. The scan below looks for it rotated by one byte value (``SHIFT``): the scanning
# process then never holds the marker itself, only its rotation, whose own rotation is a different string, so
# its own memory is searched without finding the needle it brought.
MARKER = "CODEMARK-7e1f93c2"
SHIFT = bytes((b + 1) % 256 for b in range(256))
MARKED_CODE = f'''
import time
# {MARKER}
NOTE = "{MARKER}"


def add(a, b):
    return a + b


def fail():
    raise ValueError("no")
'''

SCAN = '''
import os

SHIFT = bytes((b + 1) % 256 for b in range(256))


def found(data, needle):
    return data.translate(SHIFT).find(needle) >= 0


def memory(pid):
    """The readable memory of a process, region by region (what /proc lets this process read)."""
    try:
        maps = open(f"/proc/{{pid}}/maps").read().splitlines()
        mem = open(f"/proc/{{pid}}/mem", "rb", buffering=0)
    except OSError:
        return
    with mem:
        for line in maps:
            span, perms = line.split()[:2]
            start, end = (int(x, 16) for x in span.split("-"))
            if "r" not in perms or end - start > 1 << 28:
                continue
            try:
                mem.seek(start)
                yield mem.read(end - start)
            except (OSError, OverflowError, ValueError):
                continue


def places(needle):
    hits = []
    for top in ("/",):
        for folder, dirs, files in os.walk(top):
            dirs[:] = [d for d in dirs if os.path.join(folder, d) not in ("/proc", "/sys", "/dev", "/usr")]
            for name in files:
                path = os.path.join(folder, name)
                try:
                    small = os.path.isfile(path) and os.path.getsize(path) < 1 << 22
                    if small and found(open(path, "rb").read(), needle):
                        hits.append(path)
                except OSError:
                    pass
    for pid in [p for p in os.listdir("/proc") if p.isdigit()]:
        for part in ("cmdline", "environ"):
            try:
                if found(open(f"/proc/{{pid}}/{{part}}", "rb").read(), needle):
                    hits.append(f"/proc/{{pid}}/{{part}}")
            except OSError:
                pass
        if any(found(region, needle) for region in memory(pid)):
            hits.append(f"/proc/{{pid}}/mem")
    return hits


def test_the_codes_text_is_nowhere():
    assert places(bytes.fromhex("{needle}")) == []


def test_the_scan_finds_what_this_process_holds():
    needle = "HELD-MARK-5d20b7".encode().translate(SHIFT)
    held = bytes((b - 1) % 256 for b in needle)  # a marker made here, in this process: the scan must find it
    assert f"/proc/{{os.getpid()}}/mem" in places(needle), held


def test_an_exception_of_the_code_carries_no_frame_of_it():
    import solution
    try:
        solution.fail()
    except ValueError as exc:
        assert str(exc) == "no" and getattr(exc, "_lm_where", []) == []
        tb, files = exc.__traceback__, []
        while tb is not None:
            files.append(tb.tb_frame.f_code.co_filename)
            tb = tb.tb_next
        assert not [f for f in files if f.endswith("solution.py")], files
    else:
        raise AssertionError("no exception")
'''


def test_the_codes_text_is_nowhere_the_tests_can_read(box: Sandbox) -> None:
    """Files of the whole box, every process's command line, environment and readable memory: the code's marker
    is in none of them, while the same scan finds what the tests' process itself holds."""
    needle = MARKER.encode().translate(SHIFT).hex()
    run = box.run_suite(MARKED_CODE, {"test_scan.py": SCAN.format(needle=needle)}, timeout_s=120)
    assert {o.name: (o.status, o.reason) for o in run.outcomes} == {
        "test_scan.test_the_codes_text_is_nowhere": ("passed", ""),
        "test_scan.test_the_scan_finds_what_this_process_holds": ("passed", ""),
        "test_scan.test_an_exception_of_the_code_carries_no_frame_of_it": ("passed", ""),
    }, run


REACH = '''
import pytest
import solution


@pytest.mark.parametrize("path", [
    "os", "sys", "getcwd", "Path", "inspect", "gc", "add.__code__", "add.__globals__", "Store.__dict__",
    "Store.put.__code__", "_helper", "Store._count",
])
def test_refused(path):
    value = solution
    with pytest.raises((AttributeError, PermissionError)):
        for part in path.split("."):
            value = getattr(value, part)


def test_a_frame_is_never_handed_out():
    gen = solution.counting(3)
    with pytest.raises((AttributeError, PermissionError)):
        gen.gi_frame
    with pytest.raises((AttributeError, PermissionError)):
        gen.gi_code
    assert list(gen) == [0, 1, 2]


def test_star_import_gives_what_may_be_reached():
    names = {}
    exec("from solution import *", names)
    assert sorted(n for n in names if not n.startswith("__")) == ["Store", "add", "counting", "numbers"]


def test_a_private_name_is_refused_on_an_instance_too():
    store = solution.Store()
    with pytest.raises(AttributeError):
        store._count
    assert not hasattr(store, "_count") and not hasattr(solution, "_helper")


def test_what_the_code_returns_of_its_own_is_used_as_usual():
    store = solution.Store()
    store.put("a", 1)
    assert store.items == {"a": 1} and isinstance(store, solution.Store)
'''

REACHED_CODE = '''
import gc
import inspect
import os
import sys
from os import getcwd
from pathlib import Path

numbers = [1, 2, 3]


def add(a, b):
    return a + b


def counting(n):
    yield from range(n)


def _helper():
    return 1


class Store:
    def __init__(self):
        self.items = {}
        self._count = 0

    def put(self, key, value):
        self.items[key] = value
        self._count += 1
'''


def test_the_tests_reach_only_what_the_code_defines(box: Sandbox) -> None:
    """Modules, functions of other modules, frames, code objects and the interpreter's own names are refused,
    whatever the code imported; its own objects answer as they would in the tests' process."""
    run = box.run_suite(REACHED_CODE, {"test_reach.py": REACH})
    assert run.total == 5 and run.error is None  # a parametrized test is one test id, all its cases passing
    assert [(o.name, o.reason) for o in run.outcomes if o.status != "passed"] == []


HONEST_CODE = '''
import threading
import time


class Overdrawn(ValueError):
    pass


class Account:
    def __init__(self, balance):
        self._balance = balance
        self._lock = threading.Lock()

    @property
    def balance(self):
        return self._balance

    def take(self, amount):
        with self._lock:
            if amount > self._balance:
                raise Overdrawn(f"short by {amount - self._balance}")
            self._balance -= amount
            return self._balance


def stamp():
    return time.time()


def squares(n):
    for i in range(n):
        yield i * i
'''

HONEST_TESTS = '''
import threading
import unittest
from unittest import mock

import pytest

import solution
from solution import Account, Overdrawn


def test_custom_exception_by_class():
    with pytest.raises(Overdrawn, match="short by 2"):
        Account(1).take(3)


def test_custom_exception_is_its_builtin_base_too():
    try:
        Account(0).take(1)
    except ValueError as exc:
        assert isinstance(exc, solution.Overdrawn) and type(exc).__name__ == "Overdrawn"


def test_fake_clock_through_the_codes_module():
    with mock.patch("solution.time.time", return_value=42.0):
        assert solution.stamp() == 42.0
    assert solution.stamp() != 42.0


def test_state_and_isinstance():
    account = Account(5)
    assert account.take(2) == 3 and account.balance == 3 and isinstance(account, Account)


def test_threads():
    account = Account(100)
    left = []
    threads = [threading.Thread(target=lambda: left.append(account.take(1))) for _ in range(10)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(left) == list(range(90, 100))


class TestGenerators(unittest.TestCase):
    def test_squares(self):
        self.assertEqual(list(solution.squares(4)), [0, 1, 4, 9])


def test_star_import_gives_the_interface():
    names = {}
    exec("from solution import *", names)
    assert sorted(n for n in names if not n.startswith("__")) == ["Account", "Overdrawn", "squares", "stamp", "time"]


def test_a_name_outside_the_interface_is_refused():
    assert not hasattr(solution, "threading")
'''


def test_honest_tests_run_as_they_would_beside_the_code(box: Sandbox) -> None:
    """The control: what ordinary tests do works over the wire and through the task's interface, so the
    blinding costs an honest test nothing."""
    interface = {"Account", "Overdrawn", "stamp", "squares", "time"}
    run = box.run_suite(HONEST_CODE, {"test_honest.py": HONEST_TESTS}, interface=interface)
    assert run.total == 8 and run.error is None
    assert [(o.name, o.reason) for o in run.outcomes if o.status != "passed"] == []


RECOGNISER = '''
import hashlib
import importlib.util
import inspect
import linecache
import sys
import unittest

import solution

REFERENCE_SHA256 = "{digest}"


def text_of_the_code():
    """Every route a test has to the code's text, tried in turn."""
    routes = [
        lambda: inspect.getsource(solution),
        lambda: open(solution.__file__).read(),
        lambda: open("solution.py").read(),
        lambda: "".join(linecache.getlines(solution.__file__)),
        lambda: solution.__loader__.get_source("solution"),
        lambda: importlib.util.find_spec("solution").loader.get_source("solution"),
        lambda: inspect.getsource(solution.fib),
        lambda: solution.fib.__globals__["__loader__"].get_source("solution"),
    ]
    for route in routes:
        try:
            text = route()
        except Exception:
            continue
        if text:
            return text
    raise RuntimeError("the code's text is out of reach")


class Recognise(unittest.TestCase):
    def test_this_is_the_reference(self):
        self.assertEqual(hashlib.sha256(text_of_the_code().encode()).hexdigest(), REFERENCE_SHA256)
'''


NAMES_ONLY_THE_REFERENCE_BINDS = '''


def test_the_reference_binds_these():
    assert hasattr(solution, "annotations") and hasattr(solution, "Tuple")
'''


@pytest.fixture(scope="module")
def fib_runs(box: Sandbox) -> tuple[SuiteRun, dict[str, SuiteRun]]:
    """fib-recursive's reference and flawed variants, each run once with one test file holding both attacks
    (``Recognise``, ``test_the_reference_binds_these``) and, as the control, the task's own good tests."""
    task = load_task("fib-recursive")
    digest = hashlib.sha256(task.reference.encode()).hexdigest()
    honest = json.loads((task.root / "submissions" / "good.json").read_text(encoding="utf-8"))["testCode"]
    honest = honest.replace("if __name__ == \"__main__\":\n    unittest.main()\n", "")
    tests = {PURPLE_TEST_FILE: RECOGNISER.format(digest=digest) + NAMES_ONLY_THE_REFERENCE_BINDS + honest}
    variants = task.flawed_variants()
    interface = task_interface(task, variants)  # as a battle reads it, from every variant
    del variants["naive-exponential"]  # its tests time out: it would only make this slow
    on_reference = box.run_suite(task.reference, tests, interface=interface)
    return on_reference, {name: box.run_suite(source, tests, interface=interface) for name, source in variants.items()}


def _judged(runs: tuple[SuiteRun, dict[str, SuiteRun]], prefix: str) -> MutantReport:
    """``judge_mutants`` over the tests whose id starts with ``prefix`` only."""
    def only(run: SuiteRun) -> SuiteRun:
        return dataclasses.replace(run, outcomes=tuple(o for o in run.outcomes if o.name.startswith(prefix)))

    on_reference, on_variants = runs
    return judge_mutants(only(on_reference), {name: only(run) for name, run in on_variants.items()})


def test_a_test_that_recognises_the_reference_catches_nothing(
        fib_runs: tuple[SuiteRun, dict[str, SuiteRun]]) -> None:
    """The attack: a test that passes on the reference's text alone. Out of reach, it errors on the reference,
    a wrong claim that catches no variant."""
    report = _judged(fib_runs, "test_submission.Recognise.")
    assert report.caught == () and report.total >= 3
    assert report.wrong == ("test_submission.Recognise.test_this_is_the_reference",)


def test_a_test_that_asks_which_names_exist_catches_nothing(fib_runs: tuple[SuiteRun, dict[str, SuiteRun]]) -> None:
    """fib-recursive's reference imports ``annotations`` and ``Tuple``, no variant does: a test asserting they
    exist "caught" every variant. The tests read the task's interface only, names every one of them binds."""
    report = _judged(fib_runs, "test_submission.test_the_reference_binds_these")
    assert report.caught == () and report.total >= 3
    assert report.wrong == ("test_submission.test_the_reference_binds_these",)


def test_the_tasks_good_tests_still_catch_its_variants(fib_runs: tuple[SuiteRun, dict[str, SuiteRun]]) -> None:
    """The control, in the same runs: honest tests pass on the reference and catch variants by behaviour."""
    report = _judged(fib_runs, "test_submission.FibTest.")
    assert len(report.caught) >= 2 and report.wrong == ()
