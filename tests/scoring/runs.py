"""SuiteRun values built by hand, standing in for what the sandbox measured."""

from __future__ import annotations

from logomesh.findings import Finding
from logomesh.sandbox import SuiteRun, TestOutcome
from logomesh.scoring.logic import RED_NOT_RUN, RedCoverage
from logomesh.scoring.measure import Measured


def suite(passed: int, failed: int = 0, *, names: tuple[str, ...] = (), error: str | None = None,
          tampered: bool = False) -> SuiteRun:
    """A SuiteRun with ``passed`` passing then ``failed`` failing tests (named from ``names`` first)."""
    outcomes = []
    for index in range(passed + failed):
        name = names[index] if index < len(names) else f"test_x.T.test_{index}"
        outcomes.append(TestOutcome(name, "passed" if index < passed else "failed"))
    return SuiteRun(tuple(outcomes), tampered=tampered, tamper_reasons=("patched",) if tampered else (),
                    error=error)


def measured(hidden: SuiteRun, purple: SuiteRun | None = None, findings: tuple[Finding, ...] = (),
             red: RedCoverage = RED_NOT_RUN) -> Measured:
    """What the sandbox measured of a submission: the hidden suite, the purple suite, the red agent's findings."""
    return Measured(hidden, purple, None, findings, red)
