"""Red probes whose records are only answers: they run as observation drivers, in the judge's process.

The stateful model probe needs nothing from inside the code's process: it
makes calls and records what came back. So it runs as a hidden-suite driver
does (``sandbox/harness/driver.py``): the task's ``model()`` and the loop that
draws sequences run in the driver, a process the code can neither write to,
trace nor read; ``import solution`` there gives proxies whose calls the
answerer, the code's own process, answers (``harness/answerer.py``). What
the code does to its own process (rewrite ``json``, ``dup2`` over every
descriptor, print a record) changes only its answers, which the driver
records as what the code answered. The record leaves the box through the
driver's result channel and is judged here, by the task's ``check_model``.

The probes that measure inside the code's process (race perturbation,
retained memory, CPU time) still run in the fork server (``probes/runtime.py``).
"""

from __future__ import annotations

import time

from logomesh import untrusted
from logomesh.red.executor import MALFORMED, TASK_MODULE, ProbeRun, ProbeSpec, Trial
from logomesh.sandbox.base import Observed, Sandbox

DRIVEN = frozenset({"model"})  # the probes run here; every other probe runs in ``probes/runtime.py``
DRIVER_FILE = "test_lm_model.py"
MAX_RECORD_CHARS = 900_000  # the driver's record of one trial, as JSON text (the harness caps a test at 1 MiB)
SLACK_S = 5.0  # the suite's wall clock beyond its trials' time: starting the driver and the answerer

# Appended to the task's red.py, which defines ``model``; every name it adds starts with ``_lm_``. One test a trial.
MODEL_TRIAL = '''

import json as _lm_json
import random as _lm_random
from observe import see as _lm_see


def _lm_trial(seed, sequences, steps):
    rng = _lm_random.Random(seed)
    records = []
    for _ in range(sequences):
        recorded = model(rng, steps)
        if isinstance(recorded, dict):
            records.append(recorded)
        elif recorded:
            return {{"divergence": [str(c) for c in list(recorded)[-40:]], "seed": seed}}
    if records:
        return {{"observed": records, "seed": seed}}
    return {{"divergence": [], "seed": seed}}
{tests}'''
MODEL_TEST = '''

def test_lm_trial_{index}():
    _lm_see(_lm_json.dumps(_lm_trial({seed}, {sequences}, {steps}), default=str, sort_keys=True))
'''


def model_driver(spec: ProbeSpec, seed: int) -> dict[str, str]:
    """The model probe's driver: one test a trial, trial ``i`` drawing from seed ``seed + i`` (or the
    ``fixed_seed`` a shrunk finding replays)."""
    sequences, steps = int(spec.args.get("sequences", 20)), int(spec.args.get("steps", 30))
    fixed = spec.args.get("fixed_seed")
    tests = "".join(MODEL_TEST.format(index=i, seed=int(fixed) if fixed is not None else seed + i,
                                      sequences=sequences, steps=steps) for i in range(max(1, spec.trials)))
    return {DRIVER_FILE: str(spec.args[TASK_MODULE]) + MODEL_TRIAL.format(tests=tests)}


def trial_of(observed: Observed) -> Trial:
    """One trial, from what the driver observed: its record, or how the code's calls ended it."""
    if observed.status == "timeout":
        return Trial("timeout", message=observed.reason)
    if observed.status != "observed":  # the answerer died, or broke the protocol
        return Trial("crashed", message=observed.reason)
    for record in observed.observations:
        if isinstance(record, list) and record[:1] == ["ended-by"]:
            return Trial("exception", exc=str(record[1] if len(record) > 1 else "")[:200])
    texts = [r[1][1] for r in observed.observations
             if isinstance(r, list) and len(r) == 2 and r[0] == "value" and isinstance(r[1], list)
             and len(r[1]) == 2 and r[1][0] == "str"]
    try:
        if len(texts) != 1 or len(texts[0]) > MAX_RECORD_CHARS:
            raise untrusted.Malformed(f"{len(texts)} trial records where the driver writes one")
        return Trial("ok", result=untrusted.parse_object(texts[0]))
    except untrusted.Malformed as exc:  # only the driver writes here: a fault of ours, not the code's
        return Trial(MALFORMED, message=f"the model driver's record is unreadable ({exc})"[:200])


def run_driven(box: Sandbox, source: str, spec: ProbeSpec, seed: int) -> ProbeRun:
    """Run a probe of ``DRIVEN`` against ``source`` in ``box``, its trials as the driver's tests."""
    if spec.probe != "model" or TASK_MODULE not in spec.args:
        return ProbeRun((), harness_error=f"the {spec.probe} probe has no driver")
    started = time.monotonic()
    trials = max(1, spec.trials)
    suite = box.observe_suite(source, model_driver(spec, seed), timeout_s=spec.timeout_s * trials + SLACK_S)
    duration = time.monotonic() - started
    by_name = {o.name.rpartition(".")[2]: o for o in suite.tests}
    if suite.error is not None and not any(o.status == "observed" for o in suite.tests):
        return ProbeRun((), harness_error=f"the model driver did not run: {suite.error}", duration_s=duration)
    found = [by_name.get(f"test_lm_trial_{i}") for i in range(trials)]
    if any(o is None for o in found):
        return ProbeRun((), harness_error="the model driver's tests were not all run", duration_s=duration)
    return ProbeRun(tuple(trial_of(o) for o in found if o is not None), duration_s=duration)

