"""Red probes whose records are only answers: they run as observation drivers, in the judge's process.

Most probes need nothing from inside the code's process: the stateful model
and the boundary calls make calls and record what came back; the injection probes call the code
and then look at what it built or touched (a query run against a canary
database, a path resolved against a secret outside the base folder, a canary
file an evaluated expression creates). So they run as a hidden-suite driver
does (``sandbox/harness/driver.py``): the probe library (``probes/library.py``)
and the task's scenarios run in the driver, a process the code can neither
write to, trace nor read, where ``import solution`` gives proxies whose calls
the answerer, the code's own process, answers (``harness/answerer.py``).
What the code does to its own process (rewrite ``json``, ``dup2`` over every
descriptor, print a record) changes only its answers, which the driver
records as what the code answered. Each trial's record is parsed strictly
(``executor.parse_trial``); it leaves the box through the driver's result
channel. A watchdog thread of the driver (``library.Watchdog``) ends a trial
at its timeout in CPU time read from the kernel, or in wall time once the
code has stopped using CPU (a hang), or at ``WALL_BACKSTOP`` times it.

An exception of the code comes back as its nearest builtin class, with the
message and the ``solution.py`` frames the answerer reports (``wire.py``), so
a boundary finding quotes them as before.

The growth and timing probes measure the code from outside as well: the
server tells the driver the answerer's pid (``observe.CODE``), and the probes
read the code's memory (``/proc/<pid>/smaps_rollup``) and CPU time
(``/proc/<pid>/stat``) from the kernel, so stopping tracemalloc or rewriting
``time.process_time`` in the code changes nothing; a call over its CPU cap is
ended by killing the code's process from the driver, and the trial's record,
written by the driver, still counts.

The race scenario runs here too, its threads calling over connections of
their own; the one instrument in the code's process is the schedule the
answerer's serving threads yield on (``wire._schedule``, docs/sandbox.md,
"Races").
"""

from __future__ import annotations

import json
import time

from logomesh import untrusted
from logomesh.red.executor import (
    MALFORMED,
    TASK_MODULE,
    WALL_BACKSTOP,
    ProbeRun,
    ProbeSpec,
    Trial,
    driver_library,
    parse_trial,
    probe_names,
)
from logomesh.sandbox.base import Observed, Sandbox
from logomesh.sandbox.setting import CLASSIC, Setting

DRIVER_FILE = "test_lm_probe.py"
MAX_RECORD_CHARS = 900_000  # one trial's record, as JSON text (the harness caps a test's observations at 1 MiB)
SLACK_S = 5.0  # the suite's wall clock beyond its trials' time: starting the driver and the answerer

# Appended to the probe library, which has imported ``solution`` (the answerer's proxies) and defines the probes.
# Every name it adds starts with ``_lm_``; one test a trial.
TRIALS = '''

import json as _lm_json
import types as _lm_types
from observe import see as _lm_see
from observe import CODE  # the code's process, which the growth and timing probes measure from outside

_lm_task_source = {task_module!r}
if _lm_task_source:
    TASK = _lm_types.ModuleType("task")
    exec(compile(_lm_task_source, "task", "exec", dont_inherit=True), TASK.__dict__)
_lm_probe = probe_{probe}
_lm_args = _lm_json.loads({args!r})


def _lm_trial(seed):
    watch = Watchdog(CODE, {limit!r}, wait_s={limit!r}, backstop_s={backstop!r}, poll_s=TRIAL_POLL_S)
    try:
        record = {{"status": "ok", "result": _lm_probe(_lm_args, seed, lambda progress: None)}}
    except MemoryError:
        record = {{"status": "memory"}}
    except Exception as exc:  # the code's comes as its nearest builtin class, with the answerer's account of it
        message = getattr(exc, "_lm_message", None)
        record = {{"status": "exception", "exc": type(exc).__name__,
                  "msg": (str(exc) if message is None else message)[:200],
                  "where": [str(w) for w in getattr(exc, "_lm_where", [])][-3:]}}
    except BaseException as exc:  # the wire's Lost: the watchdog ended the code, or its process died
        if not watch.fired and type(exc).__name__ != "Lost":  # a BaseException of the code's: the driver's
            watch.finish()
            raise
        # A probe that ends the code after each trial (fresh_after) marks it stopped by the judge, so a death
        # of the code's own is said here, or it would read as an exception the code raised.
        record = {{"status": watch.reason or "crashed"}}
    record["cpu_s"] = watch.finish()
    if watch.fired:  # a limit, not the probe, ended the trial, whatever it recorded before
        record = {{"status": watch.reason, "cpu_s": record["cpu_s"]}}
    record["introspection"] = sorted(set(LOOKS))
    LOOKS.clear()
    _lm_see(_lm_json.dumps(record, default=str))
{tests}'''
TEST = '''

def test_lm_trial_{index}():
    _lm_trial({seed})
'''


def probe_driver(spec: ProbeSpec, seed: int) -> dict[str, str]:
    """The probe as a driver module: one test a trial, trial ``i`` run with seed ``seed + i``."""
    args = {k: v for k, v in spec.args.items() if k != TASK_MODULE}
    tests = "".join(TEST.format(index=i, seed=seed + i) for i in range(max(1, spec.trials)))
    trials = TRIALS.format(task_module=str(spec.args.get(TASK_MODULE, "")), probe=spec.probe,
                           args=json.dumps(args), tests=tests, limit=float(spec.timeout_s),
                           backstop=float(spec.timeout_s) * WALL_BACKSTOP)
    return {DRIVER_FILE: driver_library(spec.probe) + trials}


def trial_of(observed: Observed) -> Trial:
    """One trial, from what the driver observed: its record, or how the code's calls ended it."""
    if observed.status == "timeout":  # the suite's wall clock, past every trial's watchdog: the machine's load
        return Trial("starved", message=observed.reason)
    if observed.status != "observed":  # the answerer died, or broke the protocol
        return Trial("crashed", message=observed.reason)
    for record in observed.observations:
        if isinstance(record, list) and record[:1] == ["ended-by"]:  # a BaseException the code raised: exit
            return Trial("exception", exc=str(record[1] if len(record) > 1 else "")[:200])
    texts = [r[1][1] for r in observed.observations
             if isinstance(r, list) and len(r) == 2 and r[0] == "value" and isinstance(r[1], list)
             and len(r[1]) == 2 and r[1][0] == "str"]
    try:
        if len(texts) != 1 or len(texts[0]) > MAX_RECORD_CHARS:
            raise untrusted.Malformed(f"{len(texts)} trial records where the driver writes one")
        return parse_trial(untrusted.parse_object(texts[0]))
    except untrusted.Malformed as exc:  # only the driver writes here: a fault of ours, not the code's
        return Trial(MALFORMED, message=f"the probe driver's record is unreadable ({exc})"[:200])


def run_driven(box: Sandbox, source: str, spec: ProbeSpec, seed: int, setting: Setting | None = CLASSIC) -> ProbeRun:
    """Run a registered probe (``executor.probe_names``) against ``source`` in ``box``, its trials as the
    driver's tests, the code's process started in ``setting``."""
    if spec.probe not in probe_names():
        return ProbeRun((), harness_error=f"the {spec.probe} probe does not run as a driver")
    started = time.monotonic()
    trials = max(1, spec.trials)
    wall = trials * spec.timeout_s * WALL_BACKSTOP + SLACK_S  # the watchdog ends each trial well before
    suite = box.observe_suite(source, probe_driver(spec, seed), timeout_s=wall, setting=setting)
    duration = time.monotonic() - started
    interfered = tuple(suite.tamper_reasons)  # what the code did to the driver, seen by the server (a finding)
    if suite.error is not None and not any(o.status == "observed" for o in suite.tests):
        return ProbeRun((), harness_error=f"the probe driver did not run: {suite.error}", duration_s=duration,
                        introspection=interfered)
    failed = [r for o in suite.tests for r in o.observations if isinstance(r, list) and r[:1] == ["import-failed"]]
    if failed:  # the code's import, not a probe, failed
        why = str(failed[0][1] if len(failed[0]) > 1 else "")[:200]
        return ProbeRun((), harness_error=f"the artifact does not import: {why}", duration_s=duration,
                        introspection=interfered)
    by_name = {o.name.rpartition(".")[2]: o for o in suite.tests}
    found = [by_name.get(f"test_lm_trial_{i}") for i in range(trials)]
    if any(o is None for o in found):
        return ProbeRun((), harness_error="the probe driver's tests were not all run", duration_s=duration,
                        introspection=interfered)
    recorded = tuple(trial_of(o) for o in found if o is not None)
    looks = tuple(dict.fromkeys([*interfered, *(r for t in recorded for r in t.introspection)]))
    return ProbeRun(recorded, duration_s=duration, introspection=looks)
