"""``Scores``: the scorer's part of a battle result, typed: taken from the score card, or parsed once from JSON.

A battle just scored takes its figures from the card's own typed values (``Scores.from_card``); a stored
result is parsed from its JSON (``Scores.from_json``): the zeros an unscored result records, or whatever an
old or hand-made ledger entry holds. Parsing never raises: a missing or malformed field reads as ``None`` (a
figure), ``0`` (a count), ``""`` (a text) or empty, so every reader sees one tolerant view. Both give the same
``Scores`` for the same card (a test holds them equal). The JSON itself is kept, unchanged, for ``to_json``
only: the ledger signs the fields exactly as they were recorded, including those no reader needs (anchors,
LLM adjustments, component details).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from logomesh.findings import SEVERITY_ORDER, Finding, Severity

if TYPE_CHECKING:
    from logomesh.sandbox import SuiteRun
    from logomesh.scoring.cis import ScoreCard

COMPONENT_NAMES = (("R", "rationale"), ("A", "architecture"), ("T", "testing"), ("L", "logic"))
PENALTY_NAMES = ("red", "intent", "behaviour")


def _figure(value: object) -> float | None:
    """A finite number as a float; ``None`` for anything else (absent, a bool, a string, NaN)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    number = float(value)
    return number if math.isfinite(number) else None


def _count(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


def _text(value: object) -> str:
    return value if isinstance(value, str) else ""


def _block(value: object) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


@dataclass(frozen=True)
class Components:
    """R, A, T and L as recorded (after the LLM adjustment)."""

    rationale: float | None
    architecture: float | None
    testing: float | None
    logic: float | None

    def named(self) -> tuple[tuple[str, str, float | None], ...]:
        """``(letter, name, value)`` for R, A, T, L in that order."""
        return tuple((letter, name, getattr(self, name)) for letter, name in COMPONENT_NAMES)


@dataclass(frozen=True)
class Penalties:
    """The factors applied to CIS_raw; ``behaviour`` is absent from entries scored before it existed."""

    red: float | None
    intent: float | None
    behaviour: float | None

    def by_name(self) -> dict[str, float | None]:
        return {name: getattr(self, name) for name in PENALTY_NAMES}


@dataclass(frozen=True)
class Band:
    """Which correctness band the CIS fell in: [boundary, 1] when every hidden test passed, else [0, boundary]."""

    all_hidden_passed: bool
    boundary: float


@dataclass(frozen=True)
class SuiteTally:
    """One suite's counts; ``error`` and ``tampered`` say why it did not run cleanly ("" when it did)."""

    passed: int
    failed: int
    total: int
    error: str = ""
    tampered: str = ""


@dataclass(frozen=True)
class Scores:
    """The scorer's figures of one result. Build it with ``from_json``; ``to_json`` gives the fields back as given."""

    cis: float | None  # None when absent or not a finite number
    cis_raw: float | None
    cis_within_band: float | None
    band: Band | None  # absent before the band existed
    components: Components
    penalties: Penalties
    hidden: SuiteTally | None
    purple: SuiteTally | None
    findings: tuple[Finding[Severity | None], ...]  # read_finding of each entry; a malformed list reads as none
    intent_reference: str  # the reference set the intent check judged against (components.intent.reference_sha256)
    _json: Mapping[str, Any] = field(repr=False, hash=False)  # the fields as parsed; read by to_json only

    @classmethod
    def from_json(cls, fields: Mapping[str, Any]) -> Scores:
        analysis = _block(fields.get("red_analysis"))
        found = analysis.get("vulnerabilities")
        tests = _block(fields.get("tests"))
        return cls(
            cis=_figure(fields.get("cis_score")),
            cis_raw=_figure(fields.get("cis_raw")),
            cis_within_band=_figure(fields.get("cis_within_band")),
            band=_band(fields.get("band")),
            components=Components(*(_figure(fields.get(f"{name}_score")) for _, name in COMPONENT_NAMES)),
            penalties=Penalties(_figure(fields.get("red_penalty_applied")), _figure(fields.get("intent_penalty")),
                                _figure(fields.get("behaviour_penalty"))),
            hidden=_tally(tests.get("hidden")),
            purple=_tally(tests.get("purple")),
            findings=tuple(read_finding(f) for f in found) if isinstance(found, list) else (),
            intent_reference=_text(_block(_block(fields.get("components")).get("intent")).get("reference_sha256")),
            _json=MappingProxyType(dict(fields)),
        )

    @classmethod
    def from_card(cls, card: ScoreCard) -> Scores:
        """A scored battle's figures from the card's typed values, rounded as the result records them; the
        card's fields (``ScoreCard.result_fields``) are kept beside them for the ledger, never parsed."""
        from logomesh.scoring.cis import rounded  # here, not above: reading a stored result needs no scorer

        def r(value: float) -> float | None:
            return _figure(rounded(value, card.config.digits))

        return cls(
            cis=r(card.cis_score),
            cis_raw=r(card.cis_raw),
            cis_within_band=r(card.cis_within_band),
            band=_band_of(card.all_hidden_passed, r(card.config.correctness_band)),
            components=Components(*(r(card.final[name]) for _, name in COMPONENT_NAMES)),
            penalties=Penalties(r(card.red_penalty_applied), r(card.intent_penalty), r(card.behaviour_penalty)),
            hidden=_tally_of(card.hidden),
            purple=_tally_of(card.purple),
            findings=tuple(replace(f, evidence="") for f in card.findings),  # evidence is kept outside the result
            intent_reference=card.intent.reference_sha256,
            _json=MappingProxyType(card.result_fields()),
        )

    def to_json(self) -> dict[str, Any]:
        """The fields exactly as they were parsed (the ledger's JSON boundary)."""
        return dict(self._json)

    def __reduce__(self) -> tuple[Any, tuple[dict[str, Any]]]:
        """Pickled as its JSON (campaign workers hand results between processes) and parsed again on arrival."""
        return (Scores.from_json, (dict(self._json),))


def _band(value: object) -> Band | None:
    boundary = _figure(value.get("boundary")) if isinstance(value, Mapping) else None
    if not isinstance(value, Mapping) or boundary is None:
        return None
    return Band(value.get("all_hidden_passed") is True, boundary)


def _band_of(all_hidden_passed: bool, boundary: float | None) -> Band | None:
    return None if boundary is None else Band(all_hidden_passed, boundary)


def _tally_of(run: SuiteRun | None) -> SuiteTally:
    """A suite's counts as the result records them (``suite_counts``: the error's first line, the tamper reason)."""
    from logomesh.scoring.testing import suite_counts

    counts = suite_counts(run)
    return SuiteTally(counts["passed"], counts["failed"], counts["total"], counts.get("error", ""),
                      counts.get("tampered", ""))


def _tally(value: object) -> SuiteTally | None:
    if not isinstance(value, Mapping):
        return None
    return SuiteTally(_count(value.get("passed")), _count(value.get("failed")), _count(value.get("total")),
                      _text(value.get("error")), _text(value.get("tampered")))


def read_finding(value: object) -> Finding[Severity | None]:
    """One entry of ``red_analysis.vulnerabilities`` as the finding ``Finding.to_json`` recorded; the one reader.

    Tolerant like every field here: a text that is missing or no string reads as ``""``, a count as ``0``,
    ``penalised`` as true unless it is ``false``, a malformed entry as an empty finding, and a severity that
    is none of the four (an old, hand-made or damaged entry) as ``None``. ``evidence`` is not in the result:
    it reads as ``""``."""
    item = _block(value)
    return Finding(
        family=_text(item.get("family")),
        severity=_severity(item.get("severity")),
        cwe=_text(item.get("cwe")),
        summary=_text(item.get("summary")),
        reproducer=_text(item.get("reproducer")),
        confirmations=_count(item.get("confirmations")),
        attempts=_count(item.get("attempts")),
        penalised=item.get("penalised") is not False,
    )


def _severity(value: object) -> Severity | None:
    return next((known for known in SEVERITY_ORDER if known == value), None)
