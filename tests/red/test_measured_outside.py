"""Growth and timing are measured from outside the code's process, through the kernel; both backends.

The growth and timing probes run as drivers (``red/driven.py``): the code
answers in a process of its own, whose memory (``/proc/<pid>/smaps_rollup``)
and CPU time (``/proc/<pid>/stat``) the judge's process reads, with every
process the code forked and the files on the box's tmpfs. So memory the
code keeps where tracemalloc cannot see (anonymous ``mmap``, a file in
``/tmp``, a child process) counts, and what
the code does to its own interpreter's instruments (``tracemalloc.stop()``, a
rewritten ``time.process_time``, an ignored SIGPROF) changes nothing. Each
hostile submission sits beside its honest control.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest
from tiers import sampled

from logomesh.context import BattleContext
from logomesh.red import attack
from logomesh.red.attacks.base import Variant
from logomesh.red.attacks.complexity import ComplexityFamily
from logomesh.red.attacks.growth import MIN_GROWTH_BYTES, GrowthFamily
from logomesh.red.context import AttackContext
from logomesh.red.executor import Trial
from logomesh.red.problem import sandbox_runner
from logomesh.sandbox import Sandbox
from logomesh.tasks import TaskSpec, load_task
from logomesh.tasks.hidden_suite import run_hidden

GROWTH_TASKS = ("rate-limiter", "lru-cache", "connection-pool", "merkle-root")

LRU = '''
import threading
from collections import OrderedDict


class LRUCache:
    def __init__(self, capacity):
        if capacity < 1:
            raise ValueError("capacity must be at least 1")
        self.capacity = capacity
        self._data = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key):
        with self._lock:
            if key not in self._data:
                return None
            self._data.move_to_end(key)
            return self._data[key]

    def put(self, key, value):
        with self._lock:
            self._note(key, value)
            self._data[key] = value
            self._data.move_to_end(key)
            if len(self._data) > self.capacity:
                self._data.popitem(last=False)

    def __len__(self):
        with self._lock:
            return len(self._data)

    def _note(self, key, value):
        pass
'''
# A journal of every put, 128 bytes a record, in anonymous mmap chunks: tracemalloc sees a few small objects.
MMAP_JOURNAL = LRU.replace("        pass\n", '''        record = repr((key, value)).encode()[:128].ljust(128)
        if not self._chunks or self._at + 128 > CHUNK:
            self._chunks.append(mmap.mmap(-1, CHUNK))
            self._at = 0
        self._chunks[-1][self._at:self._at + 128] = record
        self._at += 128
''').replace("        self._lock = threading.Lock()\n", "        self._lock = threading.Lock()\n"
                                                   "        self._chunks = []\n        self._at = 0\n")
MMAP_JOURNAL = "import mmap\nCHUNK = 1 << 16\n" + MMAP_JOURNAL
# The honest control: the same journal as a ring in one chunk, overwritten in turn.
MMAP_RING = LRU.replace("        pass\n", '''        record = repr((key, value)).encode()[:128].ljust(128)
        self._ring[self._at:self._at + 128] = record
        self._at = (self._at + 128) % CHUNK
''').replace("        self._lock = threading.Lock()\n", "        self._lock = threading.Lock()\n"
                                                   "        self._ring = mmap.mmap(-1, CHUNK)\n        self._at = 0\n")
MMAP_RING = "import mmap\nCHUNK = 1 << 16\n" + MMAP_RING
# Leaks like the library's lazy-queue LRU, and turns memory tracing off (and on) on every put.
TRACE_OFF = "    def _note(self, key, value):\n        import tracemalloc; tracemalloc.stop(); tracemalloc.start()\n"
KEEP_ALL = "        self._seen.append((key, value, object()))\n"

REDOS = "import re\nR = re.compile(r'^([a-z]+\\.?)*@x$')\n\ndef is_valid_email(s):\n    return bool(R.match(s))\n"
LINEAR = "import re\nR = re.compile(r'^[a-z.]+@x$')\n\ndef is_valid_email(s):\n    return bool(R.match(s))\n"
# Rewrites every clock and signal of its own process the fork server's timing probe used to rely on.
BLIND_CLOCKS = '''
import signal, time
time.process_time = lambda: 0.0
time.perf_counter = lambda: 0.0
signal.signal(signal.SIGPROF, signal.SIG_IGN)
signal.setitimer = lambda *args: (0.0, 0.0)
'''


@pytest.fixture(scope="module")
def box(either_box: Sandbox) -> Sandbox:
    return either_box


def growth_variant(task: TaskSpec, source: str) -> Variant:
    """The task's growth variant (its ``[red.growth]`` entry), built against ``source``."""
    ctx = AttackContext.build(task, source)
    reference = AttackContext.build(task, task.reference)
    [entry] = [e for e in reference.entries() if GrowthFamily().variants(reference, e)]
    [variant] = GrowthFamily().variants(ctx, entry)
    return variant


def growth_trial(box: Sandbox, task: TaskSpec, source: str) -> tuple[Variant, Trial]:
    variant = growth_variant(task, source)
    run = sandbox_runner(box, source, task.reference)(variant.spec, 0)
    assert run.harness_error == "" and len(run.trials) == 1, run
    return variant, run.trials[0]


def retained(trial: Trial) -> list[int]:
    assert trial.status == "ok", trial
    return [int(p["bytes"]) for p in trial.result["points"]]


def leaking(task: TaskSpec) -> list[str]:
    return [n for n in task.submission_names() if task.labelled_submission(n).label == "unbounded-growth"]


@pytest.mark.parametrize("task_id", sampled(GROWTH_TASKS, GROWTH_TASKS, keep={"lru-cache"}))
def test_the_librarys_leaks_are_found_and_correct_code_is_not(box: Sandbox, task_id: str) -> None:
    task = load_task(task_id)
    family = GrowthFamily()
    assert leaking(task), "every task with a growth driver has a submission labelled with a growth defect"
    for name in leaking(task):
        source = task.labelled_submission(name).submission.source
        variant = growth_variant(task, source)
        # The confirming replay's trials share one suite: each must start from a fresh import (merkle-root's
        # module-level leaf cache, filled by the first trial, hid the leak from the next two before).
        run = sandbox_runner(box, source, task.reference)(replace(variant.spec, trials=variant.confirm_trials), 0)
        assert run.harness_error == "" and len(run.trials) == variant.confirm_trials > 1, run
        for trial in run.trials:
            assert family.judge(variant, trial).hit, (name, retained(trial))
            assert retained(trial)[-1] > 2 * MIN_GROWTH_BYTES, (name, retained(trial))
    for name, source in (("reference", task.reference), ("good", task.labelled_submission("good").submission.source)):
        variant, trial = growth_trial(box, task, source)
        assert not family.judge(variant, trial).hit, (name, retained(trial))
        # What the verdict weighs is the growth between the sizes: a correct limiter keeps its window's keys
        # alive in every run the probe keeps (about 280 kB at both sizes), which is live state, not growth.
        small, large = retained(trial)
        assert large - small < MIN_GROWTH_BYTES / 2, (name, retained(trial))


def test_the_red_agent_reports_a_journal_in_anonymous_mmap(box: Sandbox) -> None:
    """The whole agent, not the probe alone (``test_a_journal_outside_the_codes_pages...[mmap]``)."""
    task = load_task("lru-cache")
    report = attack(task, MMAP_JOURNAL, box, BattleContext(seed=0), budget_s=3.0)
    found = [f for f in report.findings if f.family == "resource-growth"]
    assert len(found) == 1 and found[0].severity == "medium" and found[0].cwe == "CWE-770"


def _with_note(body: str, init: str, prelude: str) -> str:
    """The honest LRU, noting every put with ``body`` (state made in ``__init__`` by ``init``)."""
    return prelude + LRU.replace("        pass\n", body).replace(
        "        self._lock = threading.Lock()\n", "        self._lock = threading.Lock()\n" + init)


# A journal of every put appended to a file in the box's tmpfs (TMPDIR): no process's pages hold it.
FILE_JOURNAL = _with_note("        self._file.write(repr((key, value)).encode()[:128].ljust(128))\n",
                          "        self._file = tempfile.TemporaryFile(buffering=0)\n", "import tempfile\n")
# The honest control: the same records in a file of fixed size, overwritten in turn.
FILE_RING = _with_note(
    "        self._file.seek(self._at)\n"
    "        self._file.write(repr((key, value)).encode()[:128].ljust(128))\n"
    "        self._at = (self._at + 128) % (1 << 16)\n",
    "        self._file = tempfile.TemporaryFile(buffering=0)\n        self._at = 0\n", "import tempfile\n")
# A journal kept by a child process the code forks, fed through a pipe.
CHILD_JOURNAL = _with_note(
    "        if self._pipe is None:\n"
    "            read, self._pipe = os.pipe()\n"
    "            if os.fork() == 0:\n"
    "                kept = []\n"
    "                while True:\n"
    "                    kept.append(os.read(read, 1 << 16) + b'')\n"
    "        os.write(self._pipe, repr((key, value)).encode()[:128].ljust(128))\n",
    "        self._pipe = None\n", "import os\n")


@pytest.mark.parametrize(("journal", "bounded"), [
    (MMAP_JOURNAL, MMAP_RING), (FILE_JOURNAL, FILE_RING), (CHILD_JOURNAL, LRU),
], ids=["mmap", "tmpfs-file", "child-process"])
def test_a_journal_outside_the_codes_pages_is_found_and_its_control_is_not(
        box: Sandbox, journal: str, bounded: str) -> None:
    """Memory kept in anonymous ``mmap`` (which tracemalloc never sees), in a file on the box's tmpfs, or by a
    process the code forked, is the code's: read from the kernel (``memory_of``, ``tmpfs_bytes``; every process
    that is not the judge's), beside the same code keeping it bounded."""
    task = load_task("lru-cache")
    family = GrowthFamily()
    variant, control = growth_trial(box, task, bounded)
    assert not family.judge(variant, control).hit, retained(control)
    variant, kept = growth_trial(box, task, journal)
    assert family.judge(variant, kept).hit, retained(kept)
    assert retained(kept)[-1] >= 8000 * 128 * 0.9


@pytest.mark.slow  # full tier: the mmap journal case keeps the principle in the fast tier
def test_stopping_memory_tracing_changes_nothing(box: Sandbox) -> None:
    task = load_task("lru-cache")
    family = GrowthFamily()
    keeper = LRU.replace("        self._lock = threading.Lock()\n",
                         "        self._lock = threading.Lock()\n        self._seen = []\n")
    for leaks in (False, True):
        plain = keeper.replace("        pass\n", KEEP_ALL if leaks else "        pass\n")
        sneaky = plain.replace("    def _note(self, key, value):\n", TRACE_OFF, 1)
        assert sneaky != plain
        (variant, honest), (_, hostile) = growth_trial(box, task, plain), growth_trial(box, task, sneaky)
        assert family.judge(variant, honest).hit is leaks
        assert "tampered" not in hostile.result
        if leaks:  # stopping the tracer hides nothing the kernel counts
            assert family.judge(variant, hostile).hit
        # Without a leak, restarting tracemalloc on every put is churn of the code's own: its tables, freed
        # and made again, fragment the heap the kernel counts (once seen at 400 kB+ on a loaded machine), so
        # the bounded twin's verdict is not asserted.


# Ends its own process once one key has been overwritten a thousand times: no hidden test does that (their
# busiest key sees a few hundred puts), the growth probe's steady churn over four keys does.
EXITS_WHEN_CHURNED = LRU.replace("        pass\n", '''        self._puts[key] = self._puts.get(key, 0) + 1
        if self._puts[key] > 1000:
            import os
            os._exit(0)
''').replace("        self._lock = threading.Lock()\n",
              "        self._lock = threading.Lock()\n        self._puts = {}\n")


def test_code_that_ends_its_process_when_measured_does_not_survive(box: Sandbox) -> None:
    """Before, a growth trial whose code died was a miss: code that exits once it sees a probe's churn hid any
    leak. Now it is a hit wherever the small control answered, as in every other family."""
    task = load_task("lru-cache")
    family = GrowthFamily()
    assert run_hidden(box, task, EXITS_WHEN_CHURNED).suite.passed == run_hidden(box, task, LRU).suite.passed
    variant = growth_variant(task, EXITS_WHEN_CHURNED)
    runner = sandbox_runner(box, EXITS_WHEN_CHURNED, task.reference)
    [trial] = runner(variant.spec, 0).trials
    verdict = family.judge(variant, trial)
    assert trial.status == "crashed" and verdict.hit and "did not survive" in verdict.observation, (trial, verdict)
    assert variant.control is not None
    [control] = runner(variant.control, 0).trials
    assert family.control_ok(variant, control), control
    _, honest = growth_trial(box, task, LRU)
    assert honest.status == "ok" and not family.judge(variant, honest).hit


def test_a_process_the_judge_may_not_read_is_not_bounded(box: Sandbox) -> None:
    """Code that makes its process non-dumpable hides its /proc/<pid>/smaps_rollup: that alone is a hit."""
    task = load_task("lru-cache")
    hidden = "import ctypes\nctypes.CDLL(None).prctl(4, 0, 0, 0, 0)\n" + LRU
    variant, trial = growth_trial(box, task, hidden)
    verdict = GrowthFamily().judge(variant, trial)
    assert verdict.hit and "cannot be measured" in verdict.observation


def timing(box: Sandbox, source: str) -> tuple[Variant, Trial]:
    task = load_task("email-validator")
    variants = ComplexityFamily().variants(AttackContext.build(task, source), "is_valid_email")
    variant = max(variants, key=lambda v: v.prior)
    run = sandbox_runner(box, source, task.reference)(variant.spec, 0)
    assert run.harness_error == "" and len(run.trials) == 1, run
    return variant, run.trials[0]


def capped_at(trial: Trial) -> Any:
    assert trial.status == "ok", trial
    return trial.result["points"][-1]["n"] if trial.result["capped"] else None


@pytest.mark.parametrize("blind", [False, True], ids=["honest", "blinds its clocks"])
def test_backtracking_is_capped_by_cpu_time_read_from_the_kernel(box: Sandbox, blind: bool) -> None:
    family = ComplexityFamily()
    prefix = BLIND_CLOCKS if blind else ""
    variant, slow = timing(box, prefix + REDOS)
    verdict = family.judge(variant, slow)
    assert verdict.hit and "CPU time read from the kernel" in verdict.observation
    assert capped_at(slow) is not None and capped_at(slow) <= 30  # exponential: capped on a short input
    last = slow.result["points"][-1]
    # Killed at the cap, or (on a loaded machine, between two of the watchdog's reads) back just after it.
    assert last["exc"] in ("cap", None) and last["t"] >= variant.spec.args["cap_s"]
    variant, fast = timing(box, prefix + LINEAR)
    assert not family.judge(variant, fast).hit and capped_at(fast) is None
    assert [p["n"] for p in fast.result["points"]] == variant.spec.args["sizes"]  # every size, up to 50,000
