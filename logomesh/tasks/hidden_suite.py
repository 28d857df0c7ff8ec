"""A task's hidden suite, judged outside the submission: the one way every caller runs it.

The task's drivers run twice in the box: against the task's reference
solution, then against the submission; each run only records observations.
Inputs a driver draws at random (``observe.drawn``) are seeded per
submission and battle (``drivers_seed``), so answers learnt from our source
fit no run; the reference runs those tests again with the same seed.
The verdicts are computed here, on the host, by ``sandbox.verdict``. The
reference's observations depend only on the reference, the drivers, the
harness and the box's image, so they are computed once for each such
combination and cached in memory and on disk (a battle then costs one suite
run, as it did when verdicts were decided in the box). Between runs the harness kills
every process of the box and removes the run's folder, whose name no run
can predict, so a submission cannot reach into a later reference run.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path

from logomesh.findings import Finding, setting_finding
from logomesh.sandbox.base import Observed, ObservedSuite, OutputSink, Sandbox, SuiteRun
from logomesh.sandbox.client import HARNESS_DIR
from logomesh.sandbox.discover import SuiteSourceError, timing_bounds
from logomesh.sandbox.setting import Setting, describe, settings_of
from logomesh.sandbox.verdict import judge_suite, judge_test, observations_bytes
from logomesh.tasks import TaskSpec
from logomesh.tasks.contract_check import under_contract

SUITE_TIMEOUT_S = 60.0


@dataclass(frozen=True)
class HiddenRun:
    suite: SuiteRun  # the verdicts
    reference_observations: bytes  # what they were judged against, as deterministic bytes
    findings: tuple[Finding, ...] = ()  # the code answered differently in the battle's two settings


def _harness_sha256() -> str:
    digest = hashlib.sha256()
    for path in sorted(HARNESS_DIR.glob("*.py")):
        digest.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def default_cache_dir() -> Path:
    """``$LOGOMESH_CACHE``, else ``$XDG_CACHE_HOME/logomesh``, else ``~/.cache/logomesh``."""
    if os.environ.get("LOGOMESH_CACHE"):
        return Path(os.environ["LOGOMESH_CACHE"])
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "logomesh"


class ReferenceCache:
    """Reference observations by (backend, image, reference, drivers, harness), in memory and on disk.

    The disk copy spares each new process (one ``battle run``) the reference's suite run. It is only
    a cache: the bytes every verdict was judged against are stored in the ledger entry, and ``replay``
    recomputes them in a fresh box and reports any difference.
    """

    def __init__(self, directory: Path | None = None) -> None:
        self._lock = threading.Lock()
        self._runs: dict[str, ObservedSuite] = {}
        self._harness = _harness_sha256()
        self._dir = directory

    def key(self, box: Sandbox, task: TaskSpec) -> str:
        reference = hashlib.sha256(task.reference_bytes).hexdigest()
        parts = (box.backend, box.image_id, reference, task.hidden_sha256, self._harness)
        return hashlib.sha256("\0".join(parts).encode()).hexdigest()

    def get(self, box: Sandbox, task: TaskSpec, seed: int = 0) -> ObservedSuite:
        """The reference's observations with drawn inputs seeded by ``seed``: the whole suite once with seed 0,
        then, for another seed, only the tests that drew inputs (``observe.drawn``), merged in suite order."""
        key = self.key(box, task)
        base = self._cached(key) or self._keep(key, box.observe_suite(task.reference, task.hidden_tests,
                                                                        timeout_s=SUITE_TIMEOUT_S))
        drawing = drawing_tests(base)
        if seed == 0 or not drawing:
            return base
        seeded_key = hashlib.sha256(f"{key}\0{seed}".encode()).hexdigest()
        cached = self._cached(seeded_key)
        if cached is not None:
            return cached
        part = box.observe_suite(task.reference, task.hidden_tests, timeout_s=SUITE_TIMEOUT_S, seed=seed,
                                 only=drawing)
        redrawn = {t.name: t for t in part.tests}
        merged = ObservedSuite(tests=tuple(redrawn.get(t.name, t) for t in base.tests), error=part.error,
                               tamper_reasons=part.tamper_reasons, duration_s=base.duration_s + part.duration_s)
        return self._keep(seeded_key, merged)

    def remember(self, box: Sandbox, task: TaskSpec, run: ObservedSuite) -> None:
        """Keep ``run`` as the reference's observations for ``task`` in ``box`` (seed 0), if it is complete."""
        self._keep(self.key(box, task), run)

    def _cached(self, key: str) -> ObservedSuite | None:
        with self._lock:
            return self._runs.get(key) or self._load(key)

    def _keep(self, key: str, run: ObservedSuite) -> ObservedSuite:
        """``run``, kept under ``key`` when it is complete (an incomplete one is recomputed next time)."""
        if run.error is None and not run.tamper_reasons and all(t.status == "observed" for t in run.tests):
            with self._lock:
                self._runs[key] = run
                self._store(key, run)
        return run

    def clear(self) -> None:
        with self._lock:
            self._runs.clear()

    def _path(self, key: str) -> Path | None:
        return None if self._dir is None else self._dir / "reference-observations" / f"{key}.json"

    def _load(self, key: str) -> ObservedSuite | None:
        path = self._path(key)
        if path is None or not path.is_file():
            return None
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            run = ObservedSuite(tests=tuple(Observed(str(t["name"]), "observed", tuple(t["obs"]), "",
                                                     float(t["duration_s"])) for t in data["tests"]))
        except (OSError, ValueError, KeyError, TypeError):
            return None  # unreadable: recompute
        self._runs[key] = run
        return run

    def _store(self, key: str, run: ObservedSuite) -> None:
        path = self._path(key)
        if path is None:
            return
        data = {"tests": [{"name": t.name, "obs": list(t.observations), "duration_s": t.duration_s} for t in run.tests]}
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            partial = path.with_suffix(f".{os.getpid()}.tmp")
            partial.write_text(json.dumps(data, separators=(",", ":")), encoding="utf-8")
            partial.replace(path)
        except OSError:
            pass  # a read-only cache only costs time


REFERENCE_CACHE = ReferenceCache(default_cache_dir())


def drawing_tests(run: ObservedSuite) -> frozenset[str]:
    """The tests whose observations depend on the run's seed: those that drew inputs (``observe.drawn``)."""
    return frozenset(t.name for t in run.tests
                     if any(isinstance(o, list) and o[:1] == ["drawn"] for o in t.observations))


def drivers_seed(seed: int, source: str) -> int:
    """The seed of the drivers' drawn inputs for one submission in one battle: from the battle's seed and the
    submission's bytes. Same battle, same inputs; but a submission cannot know its inputs before it is written
    (it would have to hold answers computed from its own hash), so answers learnt from our source fit none."""
    digest = hashlib.sha256(f"{seed}\0".encode() + source.encode("utf-8", "surrogatepass")).digest()
    return int.from_bytes(digest[:8], "big") or 1


def run_hidden(
    box: Sandbox,
    task: TaskSpec,
    source: str,
    on_output: OutputSink | None = None,
    cache: ReferenceCache = REFERENCE_CACHE,
    seed: int = 0,
) -> HiddenRun:
    """Run the task's hidden drivers on ``source`` and judge them against the reference, both with the drawn
    inputs of ``drivers_seed(seed, source)``."""
    try:
        bounds = timing_bounds(task.hidden_tests)
    except SuiteSourceError as exc:
        return HiddenRun(SuiteRun(outcomes=(), error=f"hidden tests: {exc}"), b"")
    drawn_seed = drivers_seed(seed, source)
    reference = cache.get(box, task, drawn_seed)

    def observed(setting: Setting | None, only: Collection[str] | None = None) -> ObservedSuite:
        got = box.observe_suite(source, task.hidden_tests, timeout_s=SUITE_TIMEOUT_S, on_output=on_output,
                                seed=drawn_seed, only=only, setting=setting)
        return under_contract(box, task, got, reference)  # answers the task's contract accepts

    classic, ordinary = settings_of(drawn_seed)
    first = observed(ordinary)  # the code as it runs where it is used: its verdicts
    suite = judge_suite(first, reference, bounds)
    failed = frozenset(o.name for o in suite.outcomes if o.status != "passed")
    keyed = setting_keyed(first, observed(classic, failed), reference) if failed else []
    if keyed:  # again, each in its setting, and the reference in the ordinary one: only what reproduces
        names = frozenset(keyed)
        again = setting_keyed(observed(ordinary, names), observed(classic, names), reference)
        theirs = box.observe_suite(task.reference, task.hidden_tests, timeout_s=SUITE_TIMEOUT_S, seed=drawn_seed,
                                   only=names, setting=ordinary)
        keyed = [n for n in keyed if n in again and n not in setting_keyed(reference, theirs, reference)]
    findings = (keyed_finding(task.entry_point, keyed, ordinary),) if keyed else ()
    return HiddenRun(suite, observations_bytes(reference), findings)


def setting_keyed(first: ObservedSuite, second: ObservedSuite, reference: ObservedSuite) -> list[str]:
    """The tests of ``second`` whose answers equal the reference's in one of the two runs and not in the other (by
    observations only: a time bound is the machine's, and a test that timed out in either run says nothing)."""
    want = {t.name: t for t in reference.tests}
    firsts = {t.name: t for t in first.tests}
    keyed = []
    for other in second.tests:
        test, expected = firsts.get(other.name), want.get(other.name)
        if test is None or expected is None or "timeout" in (test.status, other.status):
            continue
        if (judge_test(test, expected).status == "passed") != (judge_test(other, expected).status == "passed"):
            keyed.append(test.name)
    return keyed


def keyed_finding(entry: str, tests: list[str], ordinary: Setting) -> Finding:
    """The critical finding of code whose answers follow how it was started."""
    shown = ", ".join(tests[:5]) + (f" and {len(tests) - 5} more" if len(tests) > 5 else "")
    return setting_finding(
        entry,
        "the hidden tests",
        reproducer=f"run the hidden tests {shown} started as {describe(None)}, then as {describe(ordinary)}: "
                   "the answers differ, twice, where the reference's do not",
        replays=2,
        evidence=f"{len(tests)} hidden tests",
    )
