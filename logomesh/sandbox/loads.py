"""The modules a submission's processes loaded across every run of it in one box, seen from outside them.

The hidden suite's record (``SuiteRun.loaded``) covers one run; code that imports a banned module only on a
call pattern the hidden tests never make (the hundredth call, a race probe's threads, an input the red agent
drew, or only in the setting the suite reruns failed tests in) loads it there instead. ``LoadsSeen`` stands in
for the box the measurement hands the hidden suite and the red agent: every observation of the submission's
own source passes through unchanged, and the modules its record names are kept (the reference's runs are not
the code's, and are not kept).

Only what was seen is kept, never a probe's incompleteness: a probe box the wall clock killed takes its record
with it (``client.py``), and a killed probe is ordinary for correct code under a complexity or growth probe.
So absence here proves nothing; the hidden suite's record alone says whether a record was complete.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from types import TracebackType

from logomesh.sandbox.base import Backend, Loaded, ObservedSuite, OutputSink, Sandbox, ScriptRun, SuiteRun, Watch
from logomesh.sandbox.setting import Setting


class LoadsSeen:
    """``box``, keeping the modules each observed run of ``source`` loaded (``seen``)."""

    def __init__(self, box: Sandbox, source: str) -> None:
        self._box, self._source = box, source
        self._seen: set[str] = set()

    @property
    def backend(self) -> Backend:
        return self._box.backend

    @property
    def image_id(self) -> str:
        return self._box.image_id

    def seen(self) -> tuple[str, ...]:
        """Every module a run of the submission was seen to load, sorted."""
        return tuple(sorted(self._seen))

    def run_suite(self, solution: str, tests: Mapping[str, str], timeout_s: float = 30.0,
                  on_output: OutputSink | None = None, interface: Collection[str] | None = None,
                  setting: Setting | None = None) -> SuiteRun:
        return self._box.run_suite(solution, tests, timeout_s, on_output, interface, setting)

    def observe_suite(self, solution: str, drivers: Mapping[str, str], timeout_s: float = 60.0,
                      on_output: OutputSink | None = None, seed: int = 0, only: Collection[str] | None = None,
                      setting: Setting | None = None, watch: Watch | None = None) -> ObservedSuite:
        observed = self._box.observe_suite(solution, drivers, timeout_s, on_output, seed, only, setting, watch)
        if solution == self._source and observed.loaded is not None:
            self._seen.update(observed.loaded.modules)
        return observed

    def run_script(self, files: Mapping[str, str], script: str, timeout_s: float = 10.0) -> ScriptRun:
        return self._box.run_script(files, script, timeout_s)

    def close(self) -> None:
        self._box.close()

    def __enter__(self) -> Sandbox:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()


def with_probes(hidden: Loaded | None, probed: Collection[str]) -> Loaded | None:
    """The hidden suite's record with the modules the probes saw added; its completeness is the hidden suite's.
    Without a hidden record there is nothing to add to (A then says the loads were not recorded)."""
    if hidden is None or set(probed) <= set(hidden.modules):
        return hidden
    return Loaded(tuple(sorted(set(hidden.modules) | set(probed))), hidden.complete)
