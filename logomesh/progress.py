"""The one wording of battle events (``describe``), and the headless consumer of the stream: one plain line
per event on stderr. The green agent's status stream says the same lines (``green/executor.py``)."""

from __future__ import annotations

import sys
from typing import TextIO

from logomesh.events import (
    BattleFailed,
    BattleFinished,
    BattleStarted,
    CorrectnessBand,
    Event,
    FindingConfirmed,
    LedgerAppended,
    PenaltyApplied,
    PurpleFinishReported,
    PurpleResponded,
    ScoreComponent,
    StageStarted,
    TestResult,
)


def describe(event: Event) -> str | None:
    """A one-line description of ``event``, or None for what is data rather than news (output, search nodes)."""
    match event:
        case BattleStarted(battle_id=b, task_id=t, purple=p, seed=s):
            return f"battle {b}: task {t}, purple {p}, seed {s}"
        case StageStarted(stage=stage):
            return f"stage: {stage}"
        case PurpleResponded(source_bytes=n, test_bytes=m, response_sha256=h):
            return f"purple answered: {n} bytes of code, {m} bytes of tests (sha256 {h[:12]})"
        case PurpleFinishReported(finish=finish):
            return f"  purple answer: {finish.note}"
        case TestResult(suite=suite, name=name, status=status, reason=reason):
            return f"  {suite} test {name}: {status}" + (f" ({reason})" if reason else "")
        case FindingConfirmed(family=f, severity=sev, cwe=cwe, summary=summary):
            return f"  red finding [{sev}] {f} {cwe}: {summary}"
        case ScoreComponent(name=name, value=value):
            return f"  {name}: {value:.3f}"
        case PenaltyApplied(name=name, factor=factor, reason=reason):
            return f"  penalty {name}: x{factor:.3f} ({reason})"
        case CorrectnessBand(within=within, cis=cis, reason=reason):
            return f"  band: x {within:.3f} -> CIS {cis:.3f} ({reason})"
        case BattleFailed(stage=stage, reason=reason):
            return f"battle failed at {stage}: {reason}"
        case LedgerAppended(sequence=seq, result_sha256=h, path=path):
            return f"recorded as entry #{seq} in {path} (result sha256 {h[:12]})"
        case BattleFinished(cis_score=cis, status=status):
            return f"battle {status}: CIS {cis:.3f}"
    return None


def routine(event: Event) -> bool:
    """A passing test: news to a caller following the battle, one line too many per test in a log."""
    return isinstance(event, TestResult) and event.status == "passed"


class ProgressPrinter:
    """An ``EventSink`` that writes ``describe(event)`` lines to a stream (stderr by default), but for
    ``routine`` ones."""

    def __init__(self, stream: TextIO | None = None) -> None:
        self.stream = stream or sys.stderr

    def __call__(self, event: Event) -> None:
        line = None if routine(event) else describe(event)
        if line is not None:
            print(line, file=self.stream, flush=True)
