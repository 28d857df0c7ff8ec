"""Submissions written to fool the judge, on both backends: none scores higher than without its trick.

Hidden-test verdicts are decided on the host from observations (``hidden_suite``),
so the classes of attack that forged in-box verdicts (a trace or profile hook
rewriting the runner's locals, frame-locals writes through ctypes, ``gc`` walks
to the runner's objects, a patched ``unittest``, echoing constants read from the
hidden test files, look-alike return values) must gain nothing: each hack is
scored against the same code without the hack. Since issue 31 the drivers and
the runner's records live in a process of their own (``harness/driver.py``):
a hook, a frame walk or a heap walk in the code's process finds nothing of the
judge there, and the hacked code scores exactly as it would without. The
hostile cases of ``test_hostile.py`` are replayed through the observation path
at the end.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from tiers import sampled

from logomesh.sandbox import Limits, Sandbox, SuiteRun, open_sandbox
from logomesh.sandbox.verdict import judge_suite
from logomesh.scoring import DEFAULT_CONFIG
from logomesh.scoring.testing import score_testing
from logomesh.tasks import TaskSpec, all_tasks, load_task
from logomesh.tasks.hidden_suite import ReferenceCache, run_hidden

from .suites import ADD_DRIVERS, GOOD_ADD

LIMITS = Limits(test_timeout_s=4.0, output_bytes=32 * 1024)
CACHE = ReferenceCache()

# Installs ``_hook`` as the trace function of every thread and of every frame already running.
INSTALL_TRACE = '''
sys.settrace(_hook)
threading.settrace(_hook)
_f = sys._getframe()
while _f is not None:
    _f.f_trace = _hook
    _f = _f.f_back
'''

# The proof: rewrite any local named ``status`` from failed to passed, in every frame.
SETTRACE_STATUS = '''
import ctypes, sys, threading
def _hook(frame, event, arg):
    loc = frame.f_locals
    if loc.get("status") in ("failed", "error"):
        loc["status"] = "passed"
        loc["reason"] = ""
        ctypes.pythonapi.PyFrame_LocalsToFast(ctypes.py_object(frame), ctypes.c_int(0))
    return _hook
''' + INSTALL_TRACE

# The same, aimed at the observing runner: every recorded exception vanishes, every False becomes True.
SETTRACE_OBSERVATIONS = '''
import ctypes, sys, threading
def _clean(value):
    if isinstance(value, list):
        if value[:1] == ["bool"]:
            return ["bool", True]
        return [_clean(v) for v in value if not (isinstance(v, list) and v[:1] in (["raised"], ["ended-by"]))]
    return value
def _hook(frame, event, arg):
    loc = frame.f_locals
    if event == "return" and isinstance(loc.get("observations"), list):
        loc["observations"] = _clean(loc["observations"])
        ctypes.pythonapi.PyFrame_LocalsToFast(ctypes.py_object(frame), ctypes.c_int(0))
    return _hook
''' + INSTALL_TRACE

SETPROFILE = SETTRACE_STATUS.replace("sys.settrace(_hook)", "sys.setprofile(_hook)").replace(
    "threading.settrace(_hook)", "threading.setprofile(_hook)")

# Without any hook: reach the runner's frames once, at import, and rewrite their locals.
FRAME_LOCALS = '''
import ctypes, sys
_f = sys._getframe()
while _f is not None:
    loc = _f.f_locals
    for name in ("meddling", "tamper"):
        if name in loc:
            loc[name] = (lambda: []) if name == "meddling" else []
    if "run_test" in loc:
        loc["run_test"] = lambda test_id: [["value", ["bool", True]]]
    ctypes.pythonapi.PyFrame_LocalsToFast(ctypes.py_object(_f), ctypes.c_int(0))
    _f = _f.f_back
'''

# Walk the heap to the harness's objects and rewrite what they will report.
GC_WALK = '''
import gc
for _o in gc.get_objects():
    if type(_o).__name__ == "Recorder":
        _o.records = [["value", ["bool", True]]]
        type(_o).reset = lambda self: [["value", ["bool", True]]]
    if isinstance(_o, dict) and _o.get("k") in ("verdict", "obs"):
        _o["status"] = "passed"
'''

PATCH_UNITTEST = '''
import unittest
for _name in dir(unittest.TestCase):
    if _name.startswith("assert") or _name == "fail":
        setattr(unittest.TestCase, _name, lambda self, *a, **k: None)
unittest.TestCase.run = lambda self, result=None: result
'''

# Read the judge's files and answer with the constants found there.
ECHO_CONSTANTS = '''
import ast, os, sys
_CONSTANTS = []
for _d in list(sys.path):
    try:
        _names = os.listdir(_d)
    except OSError:
        continue
    for _n in _names:
        if _n.startswith("test_") and _n.endswith(".py"):
            with open(os.path.join(_d, _n)) as _h:
                for _node in ast.walk(ast.parse(_h.read())):
                    if isinstance(_node, ast.Constant) and not isinstance(_node.value, str):
                        _CONSTANTS.append(_node.value)
_CONSTANTS = _CONSTANTS or [True]
'''

HACKS = {
    "settrace-status": SETTRACE_STATUS,
    "settrace-observations": SETTRACE_OBSERVATIONS,
    "setprofile": SETPROFILE,
    "frame-locals": FRAME_LOCALS,
    "gc-walk": GC_WALK,
    "patch-unittest": PATCH_UNITTEST,
    "echo-constants": ECHO_CONSTANTS,
}


def broken(task: TaskSpec) -> str:
    """The task's entry point, broken: every call raises."""
    return (f"class {task.entry_point}:\n"
            "    def __init__(self, *args, **kwargs):\n"
            "        raise RuntimeError('not implemented')\n")


def echoing(task: TaskSpec) -> str:
    """The entry point answers every call with a constant read from the hidden tests (needs ECHO_CONSTANTS)."""
    return (f"class {task.entry_point}:\n"
            "    def __init__(self, *args, **kwargs):\n"
            "        self._i = 0\n"
            "    def __call__(self, *args, **kwargs):\n"
            "        self._i += 1\n"
            "        return _CONSTANTS[self._i % len(_CONSTANTS)]\n"
            "    def __getattr__(self, name):\n"
            "        return self\n"
            "    def __eq__(self, other):\n"
            "        return True\n"
            "    def __bool__(self):\n"
            "        return True\n")


@pytest.fixture(
    scope="module",
    params=[pytest.param("docker", marks=pytest.mark.docker), pytest.param("bwrap", marks=pytest.mark.bwrap)],
)
def box(request: pytest.FixtureRequest) -> Iterator[Sandbox]:
    sandbox = open_sandbox(str(request.param), LIMITS)
    yield sandbox
    sandbox.close()


def hidden(box: Sandbox, task: TaskSpec, source: str) -> SuiteRun:
    return run_hidden(box, task, source, cache=CACHE).suite


def t_score(run: SuiteRun) -> float:
    return score_testing(run, DEFAULT_CONFIG).score


TASKS = all_tasks()


@pytest.mark.parametrize("task", sampled(TASKS, [t.id for t in TASKS],
                                         keep={"rate-limiter", "lru-cache", "fib-recursive"}))
def test_the_settrace_proof_scores_the_floor_on_every_task(box: Sandbox, task: TaskSpec) -> None:
    plain = hidden(box, task, broken(task))
    hacked = hidden(box, task, SETTRACE_STATUS + broken(task))
    assert plain.passed == 0, [o for o in plain.outcomes if o.status == "passed"]
    assert hacked.passed == 0
    assert t_score(hacked) == pytest.approx(DEFAULT_CONFIG.testing_floor)


@pytest.mark.parametrize("hack", sorted(HACKS))
@pytest.mark.parametrize("task_id", sampled(["rate-limiter", "lru-cache", "bank-ledger"],
                                             ["rate-limiter", "lru-cache", "bank-ledger"], keep={"rate-limiter"}))
def test_no_hack_scores_higher_than_the_same_code_without_it(box: Sandbox, hack: str, task_id: str) -> None:
    task = load_task(task_id)
    if hack == "echo-constants":
        code, without = echoing(task), "_CONSTANTS = [True]\n"
    else:
        code, without = broken(task), ""
    plain = hidden(box, task, without + code)
    hacked = hidden(box, task, HACKS[hack] + "\n" + code)
    assert hacked.passed <= plain.passed, [o.name for o in hacked.outcomes if o.status == "passed"]
    assert t_score(hacked) <= t_score(plain)


LOOKALIKES = {
    "always-equal": "class _V:\n    def __eq__(self, other):\n        return True\n    __hash__ = object.__hash__\n",
    "int-subclass": "class _V(int):\n    def __eq__(self, other):\n        return True\n    __hash__ = int.__hash__\n",
    "list-subclass": "class _V(list):\n    def __eq__(self, other):\n        return True\n",
}


@pytest.mark.parametrize("kind", sorted(LOOKALIKES))
def test_look_alike_values_never_pass(box: Sandbox, kind: str) -> None:
    task = load_task("rate-limiter")
    limiter = ("class RateLimiter:\n"
               "    def __init__(self, max_requests, window_seconds, clock=None):\n"
               "        if max_requests < 1 or window_seconds <= 0:\n"
               "            raise ValueError('bad')\n"
               "    def allow(self, key):\n"
               "        return {value}\n")
    plain = hidden(box, task, limiter.format(value="None"))
    lookalike = hidden(box, task, LOOKALIKES[kind] + limiter.format(value="_V()"))
    assert lookalike.passed == plain.passed, [o.name for o in lookalike.outcomes if o.status == "passed"]
    assert plain.passed == 2  # the two constructor-validation drivers: they never call allow()


# ---- today's hostile cases, through the observation path ------------------------------------------

SMALL = "test_add.TestAdd.test_small"


def attack_in_small(body: str, prelude: str = "") -> str:
    indented = "\n".join("        " + line for line in body.strip().splitlines())
    return f"{prelude}\ndef add(a, b):\n    if (a, b) == (1, 2):\n{indented}\n    return a + b\n"


def observed(box: Sandbox, source: str, timeout_s: float = 20.0) -> SuiteRun:
    reference = box.observe_suite(GOOD_ADD, ADD_DRIVERS)
    return judge_suite(box.observe_suite(source, ADD_DRIVERS, timeout_s=timeout_s), reference)


FORGE_RECORDS = (
    "import json, os\n"
    "for fd in range(3, 32):\n"
    "    for i in range(4):\n"
    "        for rec in ({'k': 'imported', 'errors': {}, 'tamper': []},\n"
    "                    {'k': 'obs', 'i': i, 'nonce': '0' * 32, 'obs': [['value', ['int', '3']]], 'tamper': []}):\n"
    "            try:\n"
    "                os.write(fd, (json.dumps(rec) + '\\n').encode())\n"
    "            except OSError:\n"
    "                pass\n"
    "os._exit(0)\n"
)
NESTED_RECORDS = (
    "import gc\n"
    "def add(a, b):\n"
    "    for o in gc.get_objects():\n"
    "        if type(o).__name__ == 'Recorder':\n"
    "            deep = []\n"
    "            for _ in range({depth}):\n"
    "                deep = [deep]\n"
    "            o.records.append(deep)\n"
    "    return a + b\n"
)
HOSTILE = {  # name -> (solution, passed, status of test_small or None)
    # The records live in the driver's process: the heap walk finds no Recorder, and a correct add passes.
    "nested-300": (NESTED_RECORDS.format(depth=300), 4, None),
    "nested-5000": (NESTED_RECORDS.format(depth=5000), 4, None),
    "fork-bomb": (attack_in_small("import os\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n"
                                  "        pass"), 3, ("timeout", "error", "crashed")),
    "memory-bomb": (attack_in_small("hog = []\nwhile True:\n    hog.append(b'x' * (32 << 20))"), 3,
                    ("crashed", "error", "failed")),
    "infinite-loop": (attack_in_small("while True:\n    pass"), 3, ("timeout",)),
    "system-exit": (attack_in_small("raise SystemExit(0)"), 3, ("failed",)),
    "exit-at-import": ("import os\nos._exit(0)\n", 0, None),
    "forged-records": (FORGE_RECORDS, 0, None),
    "fake-passed-output": ("print('Ran 4 tests\\n\\nOK\\n4 passed')\ndef add(a, b):\n    return 0\n", 1, None),
    "kill-harness": (attack_in_small("import os, signal\nfor pid in (1, os.getppid()):\n    try:\n"
                                     "        os.kill(pid, signal.SIGKILL)\n    except OSError:\n"
                                     "        pass"), 4, None),
}


@pytest.mark.parametrize("case", sampled(sorted(HOSTILE), sorted(HOSTILE),
                                         keep={"nested-5000", "fork-bomb", "forged-records", "kill-harness"}))
def test_hostile_submissions_gain_nothing_through_observations(box: Sandbox, case: str) -> None:
    solution, passed, small = HOSTILE[case]
    run = observed(box, solution)
    assert run.passed == passed, run.outcomes
    if small is not None:
        status = next(o.status for o in run.outcomes if o.name == SMALL)
        assert status in small, run.outcomes
    after = observed(box, GOOD_ADD)
    assert (after.passed, after.total, after.tampered) == (4, 4, False)


def test_a_sleeper_hits_the_suite_wall_clock_through_observations(box: Sandbox) -> None:
    run = observed(box, "import time\ndef add(a, b):\n    time.sleep(10**6)\n", timeout_s=3)
    assert run.passed == 0 and run.error is not None and "wall clock" in run.error
