from __future__ import annotations

import io

from logomesh.events import (
    BattleFailed,
    BattleStarted,
    LedgerAppended,
    MctsNodeUpdated,
    ScoreComponent,
    TestResult,
)
from logomesh.progress import ProgressPrinter, describe


def test_printer_writes_one_line_per_described_event() -> None:
    out = io.StringIO()
    printer = ProgressPrinter(out)
    printer(BattleStarted("b1", "rate-limiter", "mock:good", 7))
    printer(ScoreComponent("b1", "testing", 0.85))
    printer(LedgerAppended("b1", 3, "ab" * 32, "/h/battles.db"))
    assert out.getvalue().splitlines() == [
        "battle b1: task rate-limiter, purple mock:good, seed 7",
        "  testing: 0.850",
        "recorded as entry #3 in /h/battles.db (result sha256 abababababab)",
    ]


def test_passing_tests_and_search_updates_are_not_logged() -> None:
    out = io.StringIO()
    printer = ProgressPrinter(out)
    printer(TestResult("b", "hidden", "t.T.test_a", "passed"))
    printer(MctsNodeUpdated("b", 1, 3, 0.5))
    printer(TestResult("b", "hidden", "t.T.test_b", "failed"))
    assert out.getvalue().splitlines() == ["  hidden test t.T.test_b: failed"]
    assert describe(TestResult("b", "hidden", "t.T.test_a", "passed")) == "  hidden test t.T.test_a: passed"
    assert describe(MctsNodeUpdated("b", 1, 3, 0.5)) is None


def test_failures_carry_their_reason() -> None:
    assert describe(TestResult("b", "hidden", "t.T.test_a", "timeout", "killed after 5 s")) == (
        "  hidden test t.T.test_a: timeout (killed after 5 s)"
    )
    assert describe(BattleFailed("b", "purple", "connection refused")) == (
        "battle failed at purple: connection refused"
    )


def test_the_band_step_says_where_x_was_placed() -> None:
    from logomesh.events import CorrectnessBand

    band = CorrectnessBand("b", True, 0.5, 0.64, 0.82, "every hidden test passed: CIS = 0.5 + 0.5·x, in [0.5, 1]")
    assert describe(band) == "  band: x 0.640 -> CIS 0.820 (every hidden test passed: CIS = 0.5 + 0.5·x, in [0.5, 1])"
