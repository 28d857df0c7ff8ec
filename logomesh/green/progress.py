"""One line of progress per battle event worth streaming to the assessment's caller."""

from __future__ import annotations

from logomesh.events import (
    BattleFailed,
    BattleFinished,
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


def progress_line(event: Event) -> str | None:
    """The status text for ``event``, or ``None`` for events too chatty to stream (output, MCTS nodes)."""
    match event:
        case StageStarted(stage=stage):
            return f"stage: {stage}"
        case PurpleResponded(source_bytes=source, test_bytes=tests):
            return f"purple answered: {source} bytes of code, {tests} bytes of tests"
        case PurpleFinishReported(finish=finish):
            return f"purple answer: {finish.note}"
        case TestResult(suite=suite, name=name, status=status):
            return f"{suite} test {name}: {status}"
        case FindingConfirmed(family=family, severity=severity, cwe=cwe, summary=summary):
            return f"red finding: {family} ({severity}, {cwe}): {summary}"
        case ScoreComponent(name=name, value=value):
            return f"score {name}: {value:.3f}"
        case PenaltyApplied(name=name, factor=factor, reason=reason):
            return f"penalty {name} x{factor:.2f}: {reason}"
        case CorrectnessBand(within=within, cis=cis, reason=reason):
            return f"band: x {within:.3f} -> CIS {cis:.3f}: {reason}"
        case BattleFailed(stage=stage, reason=reason):
            return f"battle failed at {stage}: {reason}"
        case LedgerAppended(sequence=sequence):
            return f"ledger entry #{sequence}"
        case BattleFinished(cis_score=cis, status=status):
            return f"finished: CIS {cis:.3f} ({status})"
    return None
