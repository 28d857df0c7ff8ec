"""The Contextual Integrity Score: R, A, T, L combined, then the penalties, then the correctness band.

``CIS_raw = w_R·R + w_A·A + w_T·T + w_L·L`` (0.25 each);
``x = CIS_raw · (1 − red_penalty_applied) · intent_penalty · behaviour_penalty``;
``CIS_final = B + (1 − B)·x`` when the hidden suite counted and every hidden test passed, else ``B·x``
(``B = config.correctness_band``, 0.5): correctness is ranked first, and x orders submissions within a band.

``intent_penalty`` (``intent.py``) judges the code as text: is its own intent
the nearest? ``behaviour_penalty`` judges it as a program: ``floor + (1 −
floor)·p`` with ``p`` the hidden pass rate, so code that reproduces none of
the judge's observations (it does another task, does not parse, or exits,
hangs or crashes before a test can run) keeps at most ``floor`` (30 %) of a
score that R and A would otherwise hand it for looking like the task.
Arithmetic runs on raw floats; every float is rounded to ``config.digits``
only when the result dictionary is built (the output boundary).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from logomesh.events import CorrectnessBand, EventSink, PenaltyApplied, ScoreComponent, discard
from logomesh.findings import RACE, SEVERITY_ORDER, Finding, max_severity
from logomesh.sandbox.loads import with_probes
from logomesh.scoring import llm_review
from logomesh.scoring.architecture import Architecture, architecture_score
from logomesh.scoring.config import DEFAULT_CONFIG, ScoringConfig
from logomesh.scoring.intent import IntentCheck, intent_check
from logomesh.scoring.logic import Logic, logic_anchor
from logomesh.scoring.rationale import Rationale, rationale_score
from logomesh.scoring.reference import library_bytes
from logomesh.scoring.testing import MutantReport, Testing, score_testing, suite_counts

if TYPE_CHECKING:
    from logomesh.sandbox import SuiteRun
    from logomesh.scoring.measure import Measured
    from logomesh.submission import Submission
    from logomesh.tasks import TaskSpec


def confirmed(findings: Sequence[Finding], config: ScoringConfig) -> list[Finding]:
    return [f for f in findings if f.confirmations >= config.min_confirmations]


def red_penalty(findings: Sequence[Finding], config: ScoringConfig) -> tuple[float, list[tuple[str, float]]]:
    """``1 − Π factor(severity)`` over the distinct severities present; each level counts once. A finding
    reported for information (not ``penalised``) counts nowhere."""
    levels = sorted({f.severity for f in findings if f.penalised}, key=SEVERITY_ORDER.index, reverse=True)
    applied: list[tuple[str, float]] = [
        (level, config.severity_factor(level)) for level in levels if config.severity_factor(level) < 1.0
    ]
    product = 1.0
    for _, factor in applied:
        product *= factor
    return 1.0 - product, applied


def behaviour_penalty(testing: Testing, config: ScoringConfig) -> float:
    """``floor + (1 − floor)·p``: the share of the judge's observations the code reproduced, floored."""
    return config.behaviour_floor + (1.0 - config.behaviour_floor) * testing.pass_rate


def all_hidden_passed(testing: Testing) -> bool:
    """The hidden suite counted (it ran, untampered, at least one test) and every test in it passed."""
    return testing.counted and testing.pass_rate == 1.0


def banded(within: float, all_passed: bool, config: ScoringConfig) -> float:
    """``B + (1 − B)·x`` for a submission that passed every hidden test, ``B·x`` for any other.

    With ``x`` in [0, 1] the two bands are [B, 1] and [0, B]: no submission that fails a hidden test scores
    above one that passes them all, and within a band the order of ``x`` is kept.
    """
    band = config.correctness_band
    return band + (1.0 - band) * within if all_passed else band * within


def band_words(all_passed: bool, config: ScoringConfig) -> str:
    band = config.correctness_band
    if all_passed:
        return f"every hidden test passed: CIS = {band:g} + {1.0 - band:g}·x, in [{band:g}, 1]"
    return f"not every hidden test passed: CIS = {band:g}·x, in [0, {band:g}]"


def rounded(x: float, digits: int) -> float:
    """``x`` as a result records it: rounded to ``digits``, and -0.0 made 0.0."""
    return round(x, digits) + 0.0


def combine(values: dict[str, float], config: ScoringConfig) -> float:
    w_r, w_a, w_t, w_l = config.weights
    return w_r * values["rationale"] + w_a * values["architecture"] + w_t * values["testing"] + w_l * values["logic"]


@dataclass(frozen=True)
class ScoreCard:
    config: ScoringConfig
    rationale: Rationale
    architecture: Architecture
    testing: Testing
    logic: Logic
    anchors: dict[str, float]  # R, A, L before the LLM and T (which is never adjusted)
    final: dict[str, float]  # after the bounded LLM adjustment
    review: llm_review.Review
    cis_raw: float
    red_penalty_applied: float
    intent_penalty: float
    intent: IntentCheck
    intent_library: bytes  # the library intents the intent check judged among, as the ledger stores them
    behaviour_penalty: float
    cis_within_band: float  # x: CIS_raw with every penalty applied, before the correctness band
    all_hidden_passed: bool  # which band: [B, 1] when true, [0, B] otherwise
    cis_score: float
    findings: tuple[Finding, ...]  # confirmed ones
    hidden: SuiteRun
    purple: SuiteRun | None
    mutants: MutantReport | None

    @property
    def intent_vector(self) -> list[float]:
        return list(self.rationale.intent_vector)

    def rests_on(self) -> dict[str, str]:
        """What each component was computed from, in words (``components.rests_on``)."""
        hidden = (f"the hidden suite: {self.hidden.passed} of {self.hidden.total} tests passed" if self.testing.counted
                  else "nothing: the hidden suite did not run the code")
        scaling = self.logic.facts.behaviour
        logic = "measured facts (red probes, complexity, invalid-input tests, purple tests)"
        if scaling is not None:
            logic += f", each not read from the hidden tests scaled by the hidden pass rate {scaling.scale:.4f}"
        return {"rationale": "the code's tokens (prose removed) against the task intent",
                "architecture": self.architecture.rests_on, "testing": hidden, "logic": logic,
                "band": band_words(self.all_hidden_passed, self.config)}

    def result_fields(self) -> dict[str, Any]:
        d = self.config.digits

        def r(x: float) -> float:
            return rounded(x, d)

        purple = suite_counts(self.purple)
        if self.mutants is not None:
            purple["flawed_caught"] = len(self.mutants.caught)
            purple["flawed_total"] = self.mutants.total
            purple["flawed_missed"] = list(self.mutants.missed)
            if self.mutants.wrong:
                purple["wrong_claims"] = list(self.mutants.wrong)
        return {
            "rationale_score": r(self.final["rationale"]),
            "architecture_score": r(self.final["architecture"]),
            "testing_score": r(self.final["testing"]),
            "logic_score": r(self.final["logic"]),
            "cis_score": r(self.cis_score),
            "cis_raw": r(self.cis_raw),
            "cis_within_band": r(self.cis_within_band),
            "band": {"all_hidden_passed": self.all_hidden_passed, "boundary": r(self.config.correctness_band)},
            "red_penalty_applied": r(self.red_penalty_applied),
            "intent_penalty": r(self.intent_penalty),
            "behaviour_penalty": r(self.behaviour_penalty),
            "red_analysis": {
                "attack_successful": bool(self.findings),
                "vulnerability_count": len(self.findings),
                "max_severity": max_severity(list(self.findings)),
                "vulnerabilities": [f.to_json() for f in self.findings],
            },
            "tests": {"hidden": suite_counts(self.hidden), "purple": purple},
            "anchors": {k: r(v) for k, v in sorted(self.anchors.items())},
            "llm_adjustments": self.review.to_json(d),
            "components": {
                "rationale": {"cosine": r(self.rationale.cosine), "windows": self.rationale.windows,
                              "windows_embedded": self.rationale.embedded},
                "architecture": {
                    "violations": [v.to_json() for v in self.architecture.violations],
                    "deductions": [{"kind": k, "constraint": c, "weight": r(w)} for k, c, w in
                                   self.architecture.deductions],
                },
                "intent": self.intent.to_json(d),
                "testing": {"hidden_pass_rate": r(self.testing.pass_rate), "counted": self.testing.counted},
                "logic": {"parts": {k: r(v) for k, v in self.logic.parts.items()},
                          "facts": self.logic.facts.to_json(r)},
                "rests_on": self.rests_on(),
            },
            "scorer_config_sha256": self.config.sha256(),
        }


def _penalties_applied(real: Sequence[Finding], levels: Sequence[tuple[str, float]], intent: IntentCheck,
                       behaviour: float, testing: Testing, hidden: SuiteRun) -> list[tuple[str, float, str]]:
    """(kind, factor, why) of each penalty that applies, in the order the events report them."""
    applied = [(f"red:{level}", factor,
                f"{sum(1 for f in real if f.severity == level and f.penalised)} confirmed {level} finding(s)")
               for level, factor in levels]
    if intent.penalty < 1.0:
        applied.append(("intent", intent.penalty, "; ".join(intent.reasons)))
    if behaviour < 1.0:
        why = f": {hidden.error}" if hidden.error else ""
        applied.append(("behaviour", behaviour, f"{hidden.passed} of {hidden.total} hidden tests passed"
                        if testing.counted else f"the hidden suite did not run the code{why}"))
    return applied


def score_submission(
    task: TaskSpec,
    submission: Submission,
    measured: Measured,
    config: ScoringConfig = DEFAULT_CONFIG,
    *,
    battle_id: str = "",
    emit: EventSink = discard,
) -> ScoreCard:
    """Score one submission from what the sandbox and the red agent ``measured`` of it.

    The one place a ``Measured`` is taken apart for scoring. ``measured.red`` says whether the red agent
    ran and how many probes reached the code; when it did not run or no probe reached the code, and no
    finding was confirmed, L's probe part is not measured and scores 0 (``logic.py``).
    """
    hidden, purple, mutants = measured.hidden, measured.purple, measured.mutants
    source = submission.source
    rationale = rationale_score(task, source, config)
    emit(ScoreComponent(battle_id, "rationale", rationale.score, {"cosine": rationale.cosine,
                                                                  "windows": rationale.windows}))
    real = confirmed(measured.findings, config)
    raced = next((f.summary for f in real if f.family == RACE and f.penalised), "")
    architecture = architecture_score(source, task.constraints, config.architecture, task.entry_point, raced,
                                      with_probes(hidden.loaded, measured.probe_loads))
    emit(ScoreComponent(battle_id, "architecture", architecture.score,
                        {"violations": [v.to_json() for v in architecture.violations]}))
    testing = score_testing(hidden, config)
    emit(ScoreComponent(battle_id, "testing", testing.score, {"hidden_pass_rate": testing.pass_rate}))
    logic = logic_anchor(source, hidden, purple, real, mutants, config.logic, measured.red,
                         behaviour=testing.pass_rate)
    emit(ScoreComponent(battle_id, "logic", logic.score, {"parts": dict(logic.parts)}))

    anchors = {"rationale": rationale.score, "architecture": architecture.score, "logic": logic.score}
    review = llm_review.review(config.llm, task.description, source, anchors, config.llm_bound)
    final = llm_review.apply(anchors, review.adjustments, config.llm_bound)
    final["testing"] = testing.score
    cis_raw = combine(final, config)

    penalty, levels = red_penalty(real, config)
    intent = intent_check(task, rationale, config, behaviour=testing.pass_rate)
    behaviour = behaviour_penalty(testing, config)
    for applied in _penalties_applied(real, levels, intent, behaviour, testing, hidden):
        emit(PenaltyApplied(battle_id, *applied))
    within = cis_raw * (1.0 - penalty) * intent.penalty * behaviour
    passed_all = all_hidden_passed(testing)
    cis = banded(within, passed_all, config)
    emit(CorrectnessBand(battle_id, passed_all, config.correctness_band, within, cis,
                         band_words(passed_all, config)))
    return ScoreCard(
        config=config, rationale=rationale, architecture=architecture, testing=testing, logic=logic,
        anchors=anchors, final=final, review=review, cis_raw=cis_raw, red_penalty_applied=penalty,
        intent_penalty=intent.penalty, intent=intent, behaviour_penalty=behaviour,
        cis_within_band=within, all_hidden_passed=passed_all, cis_score=cis,
        findings=tuple(real), intent_library=library_bytes(task),
        hidden=hidden, purple=purple, mutants=mutants,
    )  # fmt: skip
