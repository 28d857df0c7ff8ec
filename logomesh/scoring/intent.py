"""The intent check: is the task's own intent clearly the nearest, among many intents, to the code?

No absolute threshold on R separates code written for a task from code written
for another: on HumanEval's canonical solutions own-intent R starts at 0.60
while cross-task R reaches 0.82. What does separate is rank: the code's own
intent is its nearest among the reference intents. So the check compares the
code's cosine with its own intent (``own``) to its best cosine with any other
reference intent (a *distractor*):

``margin = own − max(distractor cosines)``

The distractors are the reference set (``reference.py``: the task library plus
the bundled HumanEval prompts) minus the task's own intent and minus every
*restatement* of it, which code cannot be asked to tell apart from it:

- a reference intent that asks for the same entry point (HumanEval/55 asks for
  ``fib`` as the library's fib-recursive does; a held-out ``is_prime`` task
  would meet HumanEval/31). The code defines that name, and a prompt that
  shows the signature embeds nearer the code than any prose can;
- when the code defines the task's entry point, a reference intent that asks
  for another name the code defines: that is a helper of this solution
  (HumanEval/10's ``make_palindrome`` comes with ``is_palindrome``, which is
  HumanEval/48; /75's ``is_multiply_prime`` defines ``is_prime``, /31), not a
  competing intent;
- a reference intent whose text embeds within ``config.intent_duplicate`` of
  the task's (HumanEval/56 and /61 ask for the same bracket check, once with
  ``<>`` and once with ``()``: cosine 0.95, and their code differs only in
  string constants, which R does not read).

The penalty keeps the paper's curve: ``floor + (1 − floor)·e`` with ``e`` in
[0, 1], so at most ``floor`` (30 %) is kept at the worst:

``e = min(1, R / threshold, 1 + (margin − intent_margin) / intent_span)``

``R / threshold`` is the paper's term (R below the absolute floor 0.35);
the margin term is 1 when the own intent is nearest by at least
``intent_margin``, and falls to 0 when another intent is nearer by
``intent_span``. Both use the measured R, which the LLM never adjusts.

Text is one kind of evidence of intent; behaviour is the other. When the
caller measured the hidden pass rate ``p`` (a battle, ``score``), the
evidence is ``max(e, p)``: code that reproduces the judge's observations is
doing this task whatever its text resembles (fib by fast doubling, with a
helper named ``_pair``, reads nearer HumanEval's ``pairs_sum_to_zero`` than
its own intent: margin −0.020), while code for another task reproduces none
of them and keeps the text's penalty in full.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from logomesh.scoring.config import ScoringConfig
from logomesh.scoring.reference import Reference, reference_for

if TYPE_CHECKING:
    from logomesh.scoring.rationale import Rationale
    from logomesh.tasks import TaskSpec

Vector = NDArray[np.float64]
_LOCK = threading.Lock()
_MASKS: dict[tuple[str, str, str, float], NDArray[np.bool_]] = {}


@dataclass(frozen=True)
class IntentCheck:
    own: float  # cosine of the code with its own intent (R before clamping)
    best: float  # the best distractor's cosine (-1 when there is none)
    nearest: str  # that distractor's key
    distractors: int  # how many reference intents were distractors
    restated: tuple[str, ...]  # not distractors: same entry point, a helper the code defines, or a near duplicate
    reference_sha256: str
    penalty: float  # the factor on the CIS: 1.0 = no penalty
    reasons: tuple[str, ...]  # why it applies (empty when it does not)
    text_penalty: float = 1.0  # the factor the text alone would give (before the behavioural evidence)

    @property
    def margin(self) -> float:
        return self.own - self.best

    def to_json(self, digits: int) -> dict[str, Any]:
        def r(x: float) -> float:
            return round(x, digits) + 0.0

        return {"own": r(self.own), "best_distractor": r(self.best), "nearest_distractor": self.nearest,
                "margin": r(self.margin), "distractors": self.distractors, "restated": list(self.restated),
                "reference_sha256": self.reference_sha256, "reasons": list(self.reasons),
                "text_penalty": r(self.text_penalty)}


def distractor_mask(reference: Reference, own_text: str, own_name: str, own_vector: Vector,
                    duplicate: float) -> NDArray[np.bool_]:
    """True for each reference intent that is a distractor: not the own text, not a restatement of it."""
    key = (reference.sha256, own_text, own_name, duplicate)
    with _LOCK:
        found = _MASKS.get(key)
    if found is None:
        same = np.array([text == own_text or name == own_name
                         for name, text in zip(reference.names, reference.texts, strict=True)], dtype=bool)
        found = ~(same | (reference.matrix @ own_vector >= duplicate))
        with _LOCK:
            _MASKS[key] = found
    return found


def penalty_factor(r_measured: float, margin: float, config: ScoringConfig,
                   behaviour: float | None = None) -> tuple[float, tuple[str, ...]]:
    """``floor + (1 − floor)·e`` (module docstring) and the reasons it is below 1.

    ``behaviour``: the hidden pass rate, when one was measured; it stands in for the text's evidence
    wherever it is the stronger of the two.
    """
    by_r = max(0.0, r_measured) / config.intent_threshold
    by_margin = 1.0 + (margin - config.intent_margin) / config.intent_span
    evidence = min(1.0, by_r, max(0.0, by_margin))
    if behaviour is not None:
        evidence = max(evidence, min(1.0, behaviour))
    if evidence >= 1.0:
        return 1.0, ()
    reasons = []
    if by_r < 1.0:
        reasons.append(f"R {r_measured:.4f} below the intent floor {config.intent_threshold}")
    if by_margin < 1.0:
        reasons.append(f"own intent not the nearest by {config.intent_margin} (margin {margin:.4f})")
    if behaviour is not None:
        reasons.append(f"and the code reproduced {behaviour:.0%} of the hidden tests' observations")
    return config.intent_floor + (1.0 - config.intent_floor) * evidence, tuple(reasons)


def judge(code: Vector, own_text: str, own_name: str, own_vector: Vector, reference: Reference, r_measured: float,
          config: ScoringConfig, defined: frozenset[str] = frozenset(), behaviour: float | None = None) -> IntentCheck:
    """The check for one code vector against one intent: one product with the reference matrix.

    ``defined``: the names the code defines; with the task's entry point among them, the others are helpers.
    ``behaviour``: the hidden pass rate, when the code was run (module docstring).
    """
    mask = distractor_mask(reference, own_text, own_name, own_vector, config.intent_duplicate)
    helpers = defined - {own_name} if own_name in defined else frozenset()
    if helpers:
        mask = mask & np.array([name not in helpers for name in reference.names], dtype=bool)
    cosines = reference.matrix @ code
    own = float(np.dot(code, own_vector))
    if mask.any():
        index = int(np.argmax(np.where(mask, cosines, -np.inf)))
        best, nearest = float(cosines[index]), reference.keys[index]
    else:
        best, nearest = -1.0, ""
    restated = tuple(k for k, t, m in zip(reference.keys, reference.texts, mask, strict=True)
                     if not m and t != own_text)
    factor, reasons = penalty_factor(r_measured, own - best, config, behaviour)
    text_factor = factor if behaviour is None else penalty_factor(r_measured, own - best, config)[0]
    return IntentCheck(own=own, best=best, nearest=nearest, distractors=int(mask.sum()), restated=restated,
                       reference_sha256=reference.sha256, penalty=factor, reasons=reasons, text_penalty=text_factor)


def intent_check(task: TaskSpec, rationale: Rationale, config: ScoringConfig,
                 behaviour: float | None = None) -> IntentCheck:
    """The check of the code R measured (``rationale``: its vector, the intent's, R and the names it defines)
    against ``task``'s intent; ``behaviour``: the hidden pass rate, when the code was run."""
    from logomesh.scoring.rationale import intent_text

    return judge(rationale.code, intent_text(task), task.entry_point, rationale.intent, reference_for(task, config),
                 rationale.score, config, rationale.defined, behaviour)
