"""A task's hidden suite, judged outside the submission: the one way every caller runs it.

The task's drivers run twice in the box: against the task's reference
solution, then against the submission; each run only records observations.
The verdicts are computed here, on the host, by ``sandbox.verdict``. The
reference's observations depend only on the reference, the drivers, the
harness and the box's interpreter, so they are computed once per process for
each such combination and reused (a battle then costs one suite run, as it
did when verdicts were decided in the box). Between runs the harness kills
every process of the box and removes the run's folder, whose name no run
can predict, so a submission cannot reach into a later reference run.
"""

from __future__ import annotations

import hashlib
import threading
from dataclasses import dataclass

from logomesh.sandbox.base import ObservedSuite, OutputSink, Sandbox, SuiteRun
from logomesh.sandbox.client import HARNESS_DIR
from logomesh.sandbox.discover import SuiteSourceError, timing_bounds
from logomesh.sandbox.verdict import judge_suite, observations_bytes
from logomesh.tasks import TaskSpec

SUITE_TIMEOUT_S = 60.0


@dataclass(frozen=True)
class HiddenRun:
    suite: SuiteRun  # the verdicts
    reference_observations: bytes  # what they were judged against, as deterministic bytes


def _harness_sha256() -> str:
    digest = hashlib.sha256()
    for path in sorted(HARNESS_DIR.glob("*.py")):
        digest.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


class ReferenceCache:
    """Reference observations by (backend, image, reference, drivers, harness)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._runs: dict[tuple[str, ...], ObservedSuite] = {}
        self._harness = _harness_sha256()

    def key(self, box: Sandbox, task: TaskSpec) -> tuple[str, ...]:
        reference = hashlib.sha256(task.reference_bytes).hexdigest()
        return (box.backend, box.image_id, reference, task.hidden_sha256, self._harness)

    def get(self, box: Sandbox, task: TaskSpec) -> ObservedSuite:
        key = self.key(box, task)
        with self._lock:
            cached = self._runs.get(key)
        if cached is not None:
            return cached
        run = box.observe_suite(task.reference, task.hidden_tests, timeout_s=SUITE_TIMEOUT_S)
        if run.error is None and not run.tamper_reasons and all(t.status == "observed" for t in run.tests):
            with self._lock:
                self._runs[key] = run
        return run

    def clear(self) -> None:
        with self._lock:
            self._runs.clear()


REFERENCE_CACHE = ReferenceCache()


def run_hidden(
    box: Sandbox,
    task: TaskSpec,
    source: str,
    on_output: OutputSink | None = None,
    cache: ReferenceCache = REFERENCE_CACHE,
) -> HiddenRun:
    """Run the task's hidden drivers on ``source`` and judge them against the reference."""
    try:
        bounds = timing_bounds(task.hidden_tests)
    except SuiteSourceError as exc:
        return HiddenRun(SuiteRun(outcomes=(), error=f"hidden tests: {exc}"), b"")
    reference = cache.get(box, task)
    submission = box.observe_suite(source, task.hidden_tests, timeout_s=SUITE_TIMEOUT_S, on_output=on_output)
    return HiddenRun(judge_suite(submission, reference, bounds), observations_bytes(reference))
