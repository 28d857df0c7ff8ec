"""What every attack family provides: variants to try, and an oracle that judges a trial.

A family never reports on its own: the agent (``logomesh/red/agent.py``) runs a
variant in the sandbox, asks the family's oracle about each trial, and only a
hit that replays and survives a benign control becomes a finding.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from logomesh.findings import Severity
from logomesh.red.context import AttackContext
from logomesh.red.executor import ProbeSpec, Trial
from logomesh.red.scenarios import Oracle


@dataclass(frozen=True)
class Variant:
    id: str  # unique within its family and entry point
    spec: ProbeSpec  # the attack
    reproducer: str  # the input or call sequence, as a human would type it
    control: ProbeSpec | None = None  # the same probe with benign input: must look like correct code
    prior: float = 0.5
    repeatable: bool = False  # randomised: another seed may find what this one did not
    confirm_trials: int = 3
    confirm_quorum: float = 1.0  # share of the replays that must reproduce (races: 0.5)
    severity: Severity | None = None  # overrides the family's severity for this variant
    cwe: str | None = None  # overrides the family's CWE for this variant
    # The id the result names (default: ``id``). Variants that differ only in a random schedule share one,
    # so which of them happened to hit first never changes the result's bytes; the evidence names ``id``.
    reported_as: str = ""
    # Judges what the task's scenario recorded, on the host (red.py's ``check_<kind>``); None where the
    # scenario judges itself in the box (a task written before scenarios recorded instead of judging).
    oracle: Oracle | None = field(default=None, compare=False)
    # Builds the reference object the probe's recorded calls are replayed on (races: ``history.py``), or None.
    model: Callable[[], Any] | None = field(default=None, compare=False)
    # False: its finding is reported for information and no score counts it (a divergence from the reference
    # only outside the contract the task's tests imply: differential.py).
    penalised: bool = True

    @property
    def reported_id(self) -> str:
        return self.reported_as or self.id


@dataclass(frozen=True)
class Verdict:
    hit: bool
    score: float  # in [0, 1]: how close the trial came to a violation (shapes the search)
    observation: str = ""
    # True: this verdict (a hit, or a search that gave up) means something only where the benign control
    # answers as correct code does: a history no serial order of the reference explains is a race only if the
    # code's serial answers are the reference's. Where they are not, the variant's model is dropped
    # (``RedProblem.play``) and the hit never becomes a finding.
    needs_clean_control: bool = False


MISS = Verdict(False, 0.0)
# Trial statuses in which the code ended or hung the process a probe measured it in, or spent the trial's
# whole CPU time: the code's doing on any machine. Where the family's benign control survives, that is a
# finding, never a clean miss: otherwise dying whenever a probe's input or instrument is present would hide
# any flaw. "starved" (the machine gave the code too little CPU to finish in time) is never the code's.
DIED = ("crashed", "timeout", "cpu")


def did_not_survive(trial: Trial) -> Verdict:
    """The hit of a trial in which the code ended or hung its process on the attack's input: the family's
    benign control, confirmed before it becomes a finding, answered. Code that dies when it recognises an
    attack would otherwise turn every finding into a miss."""
    return Verdict(True, 1.0, f"the code did not survive the attack input ({trial.status}); the benign "
                              "control answered")


def with_args(variant: Variant, reproducer: str, **args: object) -> Variant:
    """``variant`` with some probe arguments replaced."""
    spec = replace(variant.spec, args={**variant.spec.args, **args})
    return replace(variant, spec=spec, reproducer=reproducer)


class Family(ABC):
    """An attack family, registered with ``attacks.register_family`` (docs/EXTENDING.md, "Attack families")."""

    name: str
    cwe: str
    severity: Severity
    rationale: str  # the CVSS-style reason for ``severity``
    probe: str  # the probe its variants run (``executor.probe_names``; ``differential`` has a runner of its own)
    # The words host and box share: argument keys the family sends, result keys it reads, placeholders the probe
    # fills in. Each must appear in this family's module and in the probe's source (tests/test_extending.py).
    markers: tuple[str, ...] = ()

    @abstractmethod
    def variants(self, ctx: AttackContext, entry: str) -> list[Variant]:
        """The variants that apply to ``entry``; empty when the family does not apply."""

    @abstractmethod
    def judge(self, variant: Variant, trial: Trial) -> Verdict:
        """Is this trial a violation of the contract?"""

    def shrink(self, variant: Variant, trial: Trial) -> Variant:
        """The smallest form of ``variant`` that should still reproduce what ``trial`` showed."""
        return variant

    def control_ok(self, variant: Variant, trial: Trial) -> bool:
        """The benign control must run cleanly; otherwise the harness, not the artifact, is at fault."""
        return trial.status == "ok"
