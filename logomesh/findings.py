"""A red-agent finding: a demonstrated, reproduced weakness of a submission.

The one finding type: the red agent produces it, the scorer turns it into the red penalty and the
``red_analysis`` block of the result (``to_json``), and every reader of a stored result gets it back
(``battle/scores.py::read_finding``): the campaign report and the console compose it with the battle it was
found in (``campaign/model.py::BattleFinding``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Generic, Literal

from typing_extensions import TypeVar

Severity = Literal["low", "medium", "high", "critical"]
SEVERITY_ORDER: tuple[Severity, ...] = ("low", "medium", "high", "critical")
MODEL = "stateful-model"  # the family that judges serial call sequences against the task's model
RACE = "race"  # the race family's name: its finding also tells A that a required lock did not exclude
SETTING = "judged-setting"  # answers that follow how the code was started (sandbox/setting.py): critical

EVIDENCE_INPUT = "red_evidence"
"""The entry input holding what the red agent measured for each finding (``Finding.evidence``)."""


SeverityT = TypeVar("SeverityT", bound="Severity | None", covariant=True, default=Severity)


@dataclass(frozen=True)
class Finding(Generic[SeverityT]):
    """A finding; ``Finding`` is ``Finding[Severity]``, and a finding read back from a stored result is
    ``Finding[Severity | None]``.

    Why two severity types on one class: what the red agent produces always has one of the four severities,
    and the scorer's penalty needs one; but reading a stored result never raises (``battle/scores.py``), and
    an old, hand-made or damaged ledger entry may name none of the four, so a read finding's severity is
    ``None`` then (shown as ``?`` or ``unknown``, ranked below ``low``). The parameter says which one a
    function holds: findings are immutable, so it is covariant: a produced finding may go wherever read ones
    are shown, but a read one cannot reach code that needs a ``Severity`` without a check.
    """

    family: str
    severity: SeverityT
    cwe: str
    summary: str
    reproducer: str
    confirmations: int = 0  # replays that had to reproduce it (all of them, or one for a race)
    attempts: int = 0  # replays run
    evidence: str = ""  # what the probes measured (values, counts, seconds): kept outside the result, see to_json
    # False: reported for information, counted by no score (a divergence outside the contract the task's tests
    # imply). In the result only when False, so every other finding's record is as it was.
    penalised: bool = True

    def to_json(self) -> dict[str, Any]:
        """The finding as the result records it: only what the seed and the code fix, so H(Δ) is reproducible.

        ``evidence`` (measurements that vary between runs) is not part of it; battles store it beside the
        result, signed with the entry's inputs (``red_evidence``). ``battle/scores.py::read_finding`` reads it
        back: the same finding, with ``evidence`` empty."""
        return {
            "family": self.family,
            "severity": self.severity,
            "cwe": self.cwe,
            "summary": self.summary,
            "reproducer": self.reproducer,
            "confirmations": self.confirmations,
            "attempts": self.attempts,
        } | ({} if self.penalised else {"penalised": False})


def setting_finding(entry: str, how: str, reproducer: str, replays: int, evidence: str) -> Finding:
    """The critical finding of code whose answers follow how it was started (issue "No run looks judged"): it
    recognises the judge's classic start and behaves like the reference only there. ``how`` names what was run
    ("the hidden tests", a probe)."""
    return Finding(
        family=SETTING,
        severity="critical",
        cwe="CWE-912",
        summary=f"{entry}: answers {how} differently when started as an ordinary program",
        reproducer=reproducer,
        confirmations=replays,
        attempts=replays,
        evidence=evidence,
    )


def max_severity(findings: tuple[Finding, ...] | list[Finding]) -> Severity:
    """The worst severity among ``findings``; ``"low"`` when there are none (the seed's default)."""
    worst = 0
    for finding in findings:
        worst = max(worst, SEVERITY_ORDER.index(finding.severity))
    return SEVERITY_ORDER[worst]
