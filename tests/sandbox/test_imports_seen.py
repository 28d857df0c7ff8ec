"""A banned import by any spelling costs A: the harness server records the modules the code loads from outside its
process (inotify on the interpreter's library, ``harness/server.py``: ``ImportWatch``), where no static check can
see the name: a code object rewritten at run time, a child ``python3``. Each hostile submission sits beside its
control, the same code loading an allowed module, which costs nothing. A flood of opens that loses the record is
never clean; another box's imports are never this box's. Both backends.
"""

from __future__ import annotations

import threading
import time
from contextlib import nullcontext
from dataclasses import replace

import pytest
from tiers import sampled

from logomesh.context import BattleContext
from logomesh.sandbox import Sandbox
from logomesh.sandbox.base import Loaded
from logomesh.sandbox.choose import open_sandbox
from logomesh.sandbox.harness.server import module_of, package_of
from logomesh.sandbox.loads import LoadsSeen, with_probes
from logomesh.scoring.architecture import SEEN, architecture_score, find_violations, loaded_violations
from logomesh.scoring.config import DEFAULT_CONFIG
from logomesh.scoring.pipeline import Judging, measure_and_score
from logomesh.submission import Submission
from logomesh.tasks import Constraints, TaskSpec, all_tasks, load_task
from logomesh.tasks.hidden_suite import ReferenceCache, run_hidden

# The module a function's code imports, renamed at run time (and passed through marshal): the source spells only
# ``statistics``, which the task allows.
REWRITTEN = '''
import marshal as _marshal
import types as _types


def _load():
    import statistics


_code = _load.__code__.replace(co_names=tuple({name!r}[:2] + {name!r}[2:] if n == "statistics" else n
                                              for n in _load.__code__.co_names))
_types.FunctionType(_marshal.loads(_marshal.dumps(_code)), globals())()
'''
CHILD = '''
import os as _os

_os.system("python3 -I -S -c " + "'import " + {name!r}[:2] + {name!r}[2:] + "'")
'''
FLOOD = '''
for _ in range(12000):  # alternating files: the kernel merges only an event equal to the last one queued
    open("/usr/lib/python3.13/os.py").close()
    open("/usr/lib/python3.13/stat.py").close()
'''

# Appended to a flawed variant: wrong on some hidden test wherever it runs, so the hidden suite reruns what failed
# in the harness's own start (``hidden_suite.py``), and only there (``-I``) it imports a module.
IN_THE_RERUN = '''
import sys as _sys

if _sys.flags.isolated:
    import {name}
'''


@pytest.fixture(scope="module")
def task() -> TaskSpec:
    return load_task("lru-cache")  # bans pickle and shelve; not os, marshal, types or statistics


def _scored(box: Sandbox, task: TaskSpec, source: str, cache: ReferenceCache) -> tuple[float, list[str], Loaded]:
    suite = run_hidden(box, task, source, cache=cache).suite
    assert suite.loaded is not None
    arch = architecture_score(source, task.constraints, DEFAULT_CONFIG.architecture, task.entry_point,
                              loaded=suite.loaded)
    return arch.score, [v.detail for v in arch.violations if SEEN in v.detail], suite.loaded


@pytest.fixture(scope="module")
def plain(box: Sandbox, task: TaskSpec, cache: ReferenceCache) -> float:
    """A of the task's reference as it is, in this module's box: what a control that loads an allowed module keeps."""
    return _scored(box, task, task.reference, cache)[0]


# The fast tier: the code object rewritten at run time; a child interpreter in the full tier.
@pytest.mark.parametrize("shape", sampled([REWRITTEN, CHILD], ["rewritten-code", "child-python"],
                                          keep=["rewritten-code"]))
def test_a_banned_import_no_static_check_sees_costs_a(box: Sandbox, task: TaskSpec, cache: ReferenceCache,
                                                      plain: float, shape: str) -> None:
    hostile, control = (task.reference + shape.format(name=name) for name in ("pickle", "statistics"))
    assert not [v for v in find_violations(hostile, task.constraints) if v.kind == "banned_import"]
    score, seen, loaded = _scored(box, task, hostile, cache)
    kept, kept_seen, kept_loaded = _scored(box, task, control, cache)
    assert "pickle" in loaded.modules and loaded.complete
    assert f"loaded pickle {SEEN}" in seen
    assert score < kept
    assert "statistics" in kept_loaded.modules and not kept_seen and kept == plain


def test_a_flood_that_loses_the_record_is_not_clean(box: Sandbox, task: TaskSpec, cache: ReferenceCache) -> None:
    source = task.reference + FLOOD
    suite = run_hidden(box, task, source, cache=cache).suite
    assert suite.loaded is not None and not suite.loaded.complete
    assert suite.tampered and "lost the record" in suite.tamper_reason
    arch = architecture_score(source, task.constraints, DEFAULT_CONFIG.architecture, task.entry_point,
                              loaded=suite.loaded)
    assert any(v.constraint == "the record of loaded modules" for v in arch.violations)


IMPORTER = '''
import importlib, sys, time
end, count = time.monotonic() + 4.0, 0
while time.monotonic() < end:
    sys.modules.pop("shelve", None)
    importlib.import_module("shelve")
    count += 1
print(count)
'''
SLOW_IMPORT = "\nimport time as _time\n_time.sleep(1.5)\n"  # the code's window stays open while the other box imports


@pytest.mark.slow
def test_another_box_imports_are_not_this_boxs(box: Sandbox, task: TaskSpec) -> None:
    with open_sandbox(box.backend) as other:
        done: list[str] = []
        worker = threading.Thread(target=lambda: done.append(other.run_script({}, IMPORTER, 20).stdout))
        worker.start()
        time.sleep(0.5)
        got = box.observe_suite(task.reference + SLOW_IMPORT, task.hidden_tests, timeout_s=60)
        worker.join()
    assert int(done[0]) > 10  # the other box was importing shelve all along
    assert got.loaded is not None and got.loaded.complete
    assert "shelve" not in got.loaded.modules


@pytest.mark.slow
def test_no_labelled_submission_loads_a_banned_module(box: Sandbox) -> None:
    for spec in all_tasks():
        sources = [spec.reference, *(spec.labelled_submission(n).submission.source for n in spec.submission_names())]
        for source in sources:
            got = box.observe_suite(source, spec.hidden_tests, timeout_s=60)
            assert got.loaded is not None and got.loaded.complete, spec.id
            assert loaded_violations(got.loaded, spec.constraints) == [], (spec.id, got.loaded)


def test_a_file_opened_in_the_library_names_its_module() -> None:
    assert package_of(".") == "" and package_of("json/__pycache__") == "json"
    assert package_of("lib-dynload") == "" and package_of("dist-packages/_pytest/__pycache__") == "_pytest"
    assert module_of("", "pickle.cpython-313.pyc") == "pickle"
    assert module_of("", "_pickle.cpython-313-x86_64-linux-gnu.so") == "_pickle"
    assert module_of("xml.etree", "__init__.py") == "xml.etree"
    assert module_of("json", "decoder.cpython-313.opt-1.pyc") == "json.decoder"
    assert module_of("", "LICENSE.txt") is None and module_of("", "__init__.py") is None


def test_a_private_accelerator_counts_as_its_module_and_a_lost_record_is_not_clean() -> None:
    banned = Constraints(banned_imports=("pickle", "sqlite3"))
    found = loaded_violations(Loaded(("_pickle", "_sqlite3", "json"), complete=True), banned)
    assert {(v.constraint, v.detail) for v in found} == {("pickle", f"loaded _pickle {SEEN}"),
                                                         ("sqlite3", f"loaded _sqlite3 {SEEN}")}
    assert loaded_violations(Loaded(("__future__",), complete=True), Constraints(banned_imports=("future",))) == []
    lost = loaded_violations(Loaded((), complete=False), banned)
    assert [v.constraint for v in lost] == ["the record of loaded modules"]


def test_a_missing_record_is_said_in_rests_on() -> None:
    spec = load_task("lru-cache")
    weights = DEFAULT_CONFIG.architecture
    absent = architecture_score(spec.reference, spec.constraints, weights, spec.entry_point)
    clean = architecture_score(spec.reference, spec.constraints, weights, spec.entry_point,
                               loaded=Loaded(("statistics",), complete=True))
    caught = architecture_score(spec.reference, spec.constraints, weights, spec.entry_point,
                                loaded=Loaded(("pickle",), complete=True))
    assert absent.rests_on == "the module's AST (the modules loaded at run time were not recorded)"
    assert clean.rests_on == "the module's AST" and clean.score == absent.score
    assert caught.rests_on == "the module's AST and the modules its processes loaded, seen from outside"
    assert caught.score == pytest.approx(clean.score - weights.banned_import)


def test_what_probes_saw_is_the_codes_runs_only(box: Sandbox, task: TaskSpec) -> None:
    """``LoadsSeen`` (the box the red agent is handed) keeps the modules runs of the submission loaded, never the
    reference's: the differential family observes both through it."""
    spec = replace(task, reference=task.reference + "\nimport wave\n")
    source = task.reference + "\nimport statistics\n"
    watched, theirs = LoadsSeen(box, source), LoadsSeen(box, spec.reference)
    run_hidden(watched, spec, source, cache=ReferenceCache())  # a fresh cache: the reference runs through it
    run_hidden(theirs, spec, spec.reference, cache=ReferenceCache())
    assert "statistics" in watched.seen() and "wave" not in watched.seen()
    assert "wave" in theirs.seen()  # the reference's run did load it: the filter is what kept it out


def test_modules_probes_saw_join_the_hidden_record_and_never_make_it_complete() -> None:
    hidden = Loaded(("json",), complete=False)
    assert with_probes(hidden, ("pickle", "json")) == Loaded(("json", "pickle"), complete=False)
    assert with_probes(Loaded(("json",), complete=True), ("json",)) == Loaded(("json",), complete=True)
    assert with_probes(None, ("pickle",)) is None  # no hidden record: A says the loads were not recorded


def test_a_banned_import_only_in_the_reruns_setting_costs_a(box: Sandbox, task: TaskSpec) -> None:
    """The hidden suite's reruns in another setting add what they loaded to the record A reads, red agent off:
    code that imports a banned module only where it is rerun loses A; its control, importing an allowed module
    there, keeps it."""
    wrong = sorted(task.flawed_variants().items())[0][1]
    scored = {name: measure_and_score(task, Submission(wrong + IN_THE_RERUN.format(name=name), "", ""),
                                      nullcontext(box), Judging(red=False), BattleContext(seed=0))
              for name in ("pickle", "statistics")}
    for name, got in scored.items():
        assert got.measured.hidden.passed < got.measured.hidden.total, name  # so the failed tests were rerun
        assert got.measured.hidden.loaded is not None and name not in got.measured.hidden.loaded.modules
        assert name in got.measured.probe_loads
    banned, control = (scored[name].card.final["architecture"] for name in ("pickle", "statistics"))
    assert banned == pytest.approx(control - DEFAULT_CONFIG.architecture.banned_import)
