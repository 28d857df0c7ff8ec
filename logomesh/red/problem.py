"""The red agent's search problem: entry point, then attack family, then variant; a leaf runs in the sandbox.

Evaluating a leaf runs its probe once. A hit is only a candidate: ``confirm``
replays it (every replay must reproduce it; for races, one violation in 10
replays suffices, since a single violation of an exact invariant proves the
race and correct code showed none in 2,400 perturbed trials), and runs the
benign control, so a broken harness is never reported. Only a candidate that
survives both becomes a ``Finding``; it records the rule it met, the measured
counts go to its evidence.
"""

from __future__ import annotations

import hashlib
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace

from logomesh import untrusted
from logomesh.findings import MODEL, SETTING, Finding, setting_finding
from logomesh.red.attacks import Family, Variant, Verdict, families
from logomesh.red.context import AttackContext
from logomesh.red.executor import ProbeRun, ProbeSpec, Trial
from logomesh.red.mcts import Action, Evaluation, Path
from logomesh.sandbox.base import Sandbox
from logomesh.sandbox.setting import CLASSIC, Setting

MAX_REPEATS = 3  # visits of a randomised leaf before it counts as exhausted
CLASSIC_SIDE, ORDINARY = 0, 1  # ProbeSpec.setting: the battle's settings (sandbox/setting.py: settings_of)
INTROSPECTION = "judge-introspection"  # code seen looking into the judge or doing something to its processes
ANSWERED = ("ok", "exception")  # trial statuses in which the code itself answered (no timeout, crash or limit)
SETTING_ROUNDS = 4  # looks at most at a confirmed race's two settings side by side (note_setting)
SETTING_P = 2.5e-4  # a look's bound on a lower classic hit rate, were both settings alike, to be critical


@dataclass(frozen=True)
class Leaf:
    entry: str
    family: Family
    variant: Variant

    @property
    def key(self) -> str:
        return f"{self.entry}/{self.family.name}/{self.variant.id}"


@dataclass(frozen=True)
class Confirmed:
    finding: Finding
    leaf: Leaf
    elapsed_s: float
    reproduced: tuple[int, int] = (0, 0)  # (hits, replays) of the confirmation


@dataclass
class Counters:
    probes: int = 0
    candidates: int = 0
    unconfirmed: int = 0
    control_failures: int = 0
    harness_errors: int = 0
    sandbox_s: float = 0.0


ProbeRunner = Callable[[ProbeSpec, int], ProbeRun]
OnFinding = Callable[[Confirmed, Path], None]


def default_seed(source: str) -> int:
    return int.from_bytes(hashlib.sha256(source.encode()).digest()[:4], "big")


def build_leaves(ctx: AttackContext) -> dict[str, dict[str, list[Leaf]]]:
    """entry -> family name -> leaves, in declaration order."""
    tree: dict[str, dict[str, list[Leaf]]] = {}
    for entry in ctx.entries():
        for family in families():
            variants = family.variants(ctx, entry)
            if variants:
                tree.setdefault(entry, {})[family.name] = [Leaf(entry, family, v) for v in variants]
    return tree


@dataclass
class RedProblem:
    ctx: AttackContext
    runner: ProbeRunner
    on_finding: OnFinding | None = None
    started: float = field(default_factory=time.monotonic)
    leaves: dict[str, dict[str, list[Leaf]]] = field(init=False)
    findings: list[Confirmed] = field(default_factory=list)
    counters: Counters = field(default_factory=Counters)
    visits: dict[str, int] = field(default_factory=dict)
    done_pairs: set[tuple[str, str]] = field(default_factory=set)
    noted_pairs: set[tuple[str, str]] = field(default_factory=set)  # with an unpenalised finding: search on
    serial: dict[tuple[str, str], bool] = field(default_factory=dict)  # did the benign control answer rightly?

    def __post_init__(self) -> None:
        self.leaves = build_leaves(self.ctx)

    # -- the tree ------------------------------------------------------------------------------------
    def actions(self, path: Path) -> Sequence[Action]:
        if not path:
            return [Action(f"entry:{e}", _best(self.leaves[e])) for e in self.leaves]
        entry = path[0].id.removeprefix("entry:")
        if len(path) == 1:
            return [Action(f"family:{f}", max(leaf.variant.prior for leaf in leaves))
                    for f, leaves in self.leaves[entry].items()]
        if len(path) == 2:
            family = path[1].id.removeprefix("family:")
            return [Action(f"variant:{leaf.variant.id}", leaf.variant.prior) for leaf in self.leaves[entry][family]]
        return []

    def leaf(self, path: Path) -> Leaf | None:
        if len(path) != 3:
            return None
        entry = path[0].id.removeprefix("entry:")
        family = path[1].id.removeprefix("family:")
        variant = path[2].id.removeprefix("variant:")
        return next((leaf for leaf in self.leaves[entry][family] if leaf.variant.id == variant), None)

    def all_leaves(self) -> list[Leaf]:
        return [leaf for families in self.leaves.values() for leaves in families.values() for leaf in leaves]

    # -- playing a leaf ------------------------------------------------------------------------------
    def evaluate(self, path: Path, rng: random.Random) -> Evaluation:
        leaf = self.leaf(path)
        if leaf is None:
            return Evaluation(0.0, exhausted=True)
        return self.play(leaf, rng.randrange(1 << 30), path)

    def play(self, leaf: Leaf, seed: int, path: Path = ()) -> Evaluation:
        """Run ``leaf`` once; confirm a hit; the evaluation the search learns from."""
        if (leaf.entry, leaf.family.name) in self.done_pairs:
            return Evaluation(0.0, exhausted=True)  # this entry already has this family's finding
        visits = self.visits.get(leaf.key, 0) + 1
        self.visits[leaf.key] = visits
        # Plays start the code as an ordinary program; the classic start only tells keyed code (note_setting).
        leaf = replace(leaf, variant=_ordinary(leaf.variant))
        run = self._run(leaf.variant.spec, seed)
        self.note_introspection(leaf, run, path)
        if run.harness_error:
            self.counters.harness_errors += 1
            return Evaluation(0.0, harness_error=True)
        judged = [(self.judge(leaf, run, t), t) for t in run.trials]
        if any(v.needs_clean_control for v, _ in judged) and not self.serially_right(leaf, seed):
            self.note_serial_divergence(leaf, seed, path)
            leaf = self.without_model(leaf)
            judged = [(self.judge(leaf, run, t), t) for t in run.trials]
        nothing: tuple[Verdict, Trial | None] = (Verdict(False, 0.0), None)
        best, best_trial = max(judged, key=lambda pair: (pair[0].hit, pair[0].score), default=nothing)
        exhausted = not leaf.variant.repeatable or visits >= MAX_REPEATS
        if not best.hit:
            return Evaluation(0.5 * best.score, exhausted=exhausted)
        self.counters.candidates += 1
        variant = leaf.variant if best_trial is None else _ordinary(_shrunk(leaf, best_trial))
        pair = (leaf.entry, leaf.family.name)
        if not variant.penalised and pair in self.noted_pairs:
            return Evaluation(0.5, exhausted=exhausted)  # one such note per entry and family is enough
        outcome = self.confirm(Leaf(leaf.entry, leaf.family, variant), seed, best)
        if isinstance(outcome, str):
            return Evaluation(0.0, harness_error=True)
        if outcome is None:
            self.counters.unconfirmed += 1
            return Evaluation(0.6, exhausted=exhausted)
        self.report(outcome, path)
        if variant.penalised:  # does the classic start show it too?
            self.note_setting(Leaf(leaf.entry, leaf.family, variant), seed, path, outcome.reproduced)
        if not variant.penalised:  # reported for information: the family may still find a penalised one
            self.noted_pairs.add(pair)
            return Evaluation(0.6, exhausted=exhausted)
        self.done_pairs.add(pair)
        return Evaluation(1.0, exhausted=True)

    def report(self, confirmed: Confirmed, path: Path) -> None:
        """Keep a confirmed finding and tell ``on_finding`` (the agent's events) where the search found it."""
        self.findings.append(confirmed)
        if self.on_finding is not None:
            self.on_finding(confirmed, path)

    def serially_right(self, leaf: Leaf, seed: int) -> bool:
        """Whether the code answers the variant's benign control as correct code does, run once per entry and
        family; True where the control did not run to an answer (``confirm`` runs it again)."""
        pair = (leaf.entry, leaf.family.name)
        if pair not in self.serial and leaf.variant.control is not None:
            control = self._run(leaf.variant.control, seed + 104729)
            answered = not control.harness_error and control.trials and all(t.status in ANSWERED
                                                                            for t in control.trials)
            self.serial[pair] = not answered or all(_control_ok(leaf.family, leaf.variant, t) for t in control.trials)
        return self.serial.get(pair, True)

    def note_serial_divergence(self, leaf: Leaf, seed: int, path: Path) -> None:
        """Code that answered a probe's benign control (its calls made one at a time, unperturbed) as no serial
        run of the reference does diverges from the task's model without any concurrency: a medium
        stateful-model finding, once per entry, when a second run of the control answers so too. Never a race
        (A reads a race as a lock that did not exclude); and never silence: dropping the model alone (below) let
        code that recognised the control switch the concurrency check off."""
        control = leaf.variant.control
        if control is None or (leaf.entry, MODEL) in self.done_pairs:
            return
        self.done_pairs.add((leaf.entry, MODEL))
        again = self._run(control, seed + 2 * 104729)
        wrong = [t for t in again.trials if t.status in ANSWERED and not _control_ok(leaf.family, leaf.variant, t)]
        if again.harness_error or not wrong:
            self.done_pairs.discard((leaf.entry, MODEL))  # not reproduced: the stateful family may still judge
            return
        as_control = Leaf(leaf.entry, leaf.family, replace(leaf.variant, spec=control))
        observation = self.judge(as_control, again, wrong[0]).observation or "answers correct code does not give"
        finding = Finding(
            family=MODEL,
            severity="medium",
            cwe="CWE-840",
            summary=f"{leaf.entry}: {MODEL} (the {leaf.family.name} probe's serial control)",
            reproducer=f"the {leaf.family.name} probe's benign control: its calls made one at a time by one "
                       "caller, unperturbed, answered as no serial run of the reference answers",
            confirmations=2,
            attempts=2,
            evidence=observation[:200],
        )
        self.report(Confirmed(finding, leaf, time.monotonic() - self.started), path)

    def note_setting(self, leaf: Leaf, seed: int, path: Path, reproduced: tuple[int, int]) -> None:
        """Code that shows a confirmed finding when started as an ordinary program (where every play starts it)
        and not in replays in the judge's classic start answers according to how it was started: it recognises
        the classic start and behaves like the reference only there. A critical finding, once per battle, beside
        the family's own (issue "No run looks judged").

        A deterministic finding (every replay reproduced it) counts when no classic replay shows it. A race
        shows in some trials and not others wherever it runs: there batches of classic trials, and from the
        second on as many ordinary ones, are added to the confirmation's ``reproduced`` while the classic
        start shows no hit, and the finding counts when Fisher's exact test puts the classic rate below the
        ordinary one at ``SETTING_P`` in any of ``SETTING_ROUNDS`` looks (honest racy code, alike in both
        settings, is blamed so with probability at most ``SETTING_ROUNDS * SETTING_P``)."""
        if any(c.finding.family == SETTING for c in self.findings):
            return
        variant = leaf.variant
        deterministic = variant.confirm_quorum >= 1.0
        ordinary, classic, rarer = list(reproduced), [0, 0], False
        for look in range(1 if deterministic else SETTING_ROUNDS):
            sides = [(ORDINARY, ordinary)] if look else []
            for side, counts in [*sides, (CLASSIC_SIDE, classic)]:
                run = self._run(replace(variant.spec, trials=variant.confirm_trials, setting=side),
                                seed + 7919 * (2 * look + 1 + side))
                if run.harness_error or not run.trials or any(t.status not in ANSWERED for t in run.trials):
                    return  # no answer there is no evidence of a different one
                counts[0] += sum(self.judge(leaf, run, t).hit for t in run.trials)
                counts[1] += len(run.trials)
            rarer = not deterministic and _rarer(classic, ordinary)
            if classic[0] or deterministic or rarer:
                break
        if classic[0] or not (deterministic or rarer):
            return
        finding = setting_finding(
            leaf.entry,
            f"its {leaf.family.name} probe",
            reproducer=(f"run the {leaf.family.name} probe ({variant.reported_id}) with the code started as an "
                        "ordinary program, then as the harness's classic start: only the first shows the finding"),
            replays=classic[1],
            evidence=(f"{leaf.family.name} {variant.id}: 0/{classic[1]} hits in the classic start"
                      + ("" if deterministic else f", {ordinary[0]}/{ordinary[1]} as an ordinary program")),
        )
        self.report(Confirmed(finding, leaf, time.monotonic() - self.started), path)

    def without_model(self, leaf: Leaf) -> Leaf:
        """``leaf``, and every leaf of its entry and family, with no model to replay its calls on: the code's
        serial answers differ from the reference's, so a history the reference cannot explain says nothing
        about concurrency (the stateful and differential families judge serial answers)."""
        leaves = self.leaves[leaf.entry][leaf.family.name]
        leaves[:] = [Leaf(one.entry, one.family, replace(one.variant, model=None)) for one in leaves]
        return replace(leaf, variant=replace(leaf.variant, model=None))

    @staticmethod
    def judge(leaf: Leaf, run: ProbeRun, trial: Trial) -> Verdict:
        """The family's verdict, or a hit when the code looked at or into the judge during the run: a
        measurement the code could reach cannot clear it (what cannot be measured is not bounded)."""
        if run.introspection:
            return Verdict(True, 1.0, f"the code {run.introspection[0]} while the probe measured it")
        try:
            return leaf.family.judge(leaf.variant, trial)
        except untrusted.Malformed as exc:  # a record the probe cannot have written: a failed observation
            return Verdict(True, 1.0, f"the probe's record of the trial is malformed ({exc})"[:200])

    def note_introspection(self, leaf: Leaf, run: ProbeRun, path: Path) -> None:
        """Code that looked at or into the judge during a probe is a critical finding, once per battle.

        The race probe's schedule (``wire._schedule``) is the one instrument of the judge in the code's
        process; code that lifted it made the probe's measurement untrustworthy, so that itself is the
        finding, whatever the trial's own verdict. So is what the server saw the code do to the probe's driver
        (killed, stopped, its limits lowered): a probe left without evidence must not read as a clean one."""
        if not run.introspection or any(c.finding.family == INTROSPECTION for c in self.findings):
            return
        finding = Finding(
            family=INTROSPECTION,
            severity="critical",
            cwe="CWE-693",
            summary=f"{leaf.entry}: looked at or into the judge while it was measured",
            reproducer=(f"run the {leaf.family.name} probe ({leaf.variant.reported_id}); "
                        f"the code {run.introspection[0]}"),
            confirmations=1,
            attempts=1,
            evidence="; ".join(run.introspection),
        )
        self.report(Confirmed(finding, leaf, time.monotonic() - self.started), path)

    def confirm(self, leaf: Leaf, seed: int, first: Verdict) -> Confirmed | str | None:
        """Replay, then the benign control. ``"harness"`` when the control did not run to an answer; a control
        the code answers wrongly keeps the finding, marked "benign control failed too"."""
        variant = leaf.variant
        replay = replace(variant.spec, trials=variant.confirm_trials)
        run = self._run(replay, seed + 7919)
        if run.harness_error:
            self.counters.harness_errors += 1
            return "harness"
        verdicts = [self.judge(leaf, run, t) for t in run.trials]
        hits = [v for v in verdicts if v.hit]
        attempts = len(verdicts)
        required = max(1, round(variant.confirm_quorum * attempts + 1e-9))
        if attempts == 0 or len(hits) < required:
            return None
        wrong_anyway = False
        if variant.control is not None:
            control = self._run(variant.control, seed + 104729)
            if control.harness_error or not control.trials or any(t.status not in ANSWERED for t in control.trials):
                self.counters.control_failures += 1
                return "harness"  # the control did not run to an answer: the harness may be at fault
            # The code answered the benign control wrongly: it is wrong beyond this attack. The finding
            # stands (the issue saw real findings discarded here), and says so.
            wrong_anyway = not all(_control_ok(leaf.family, variant, t) for t in control.trials)
            self.counters.control_failures += wrong_anyway
            if wrong_anyway and all(v.needs_clean_control for v in hits):
                return None
        observation = hits[0].observation or first.observation
        note = ", benign control failed too" if wrong_anyway else ""
        finding = Finding(
            family=leaf.family.name,
            severity=variant.severity or leaf.family.severity,
            cwe=variant.cwe or leaf.family.cwe,
            summary=f"{leaf.entry}: {leaf.family.name} ({variant.reported_id}){note}",  # fixed by seed and code
            reproducer=variant.reproducer,
            confirmations=required,  # the rule met (all replays, or one for a race): fixed by the variant
            attempts=attempts,
            evidence=f"{observation} ({variant.id}, reproduced {len(hits)}/{attempts})",  # measured: not in the result
            penalised=variant.penalised,
        )
        return Confirmed(finding, leaf, time.monotonic() - self.started, (len(hits), attempts))

    def _run(self, spec: ProbeSpec, seed: int) -> ProbeRun:
        self.counters.probes += 1
        started = time.monotonic()
        try:
            return self.runner(spec, seed)
        finally:
            self.counters.sandbox_s += time.monotonic() - started


def _ordinary(variant: Variant) -> Variant:
    """``variant`` with its probe and benign control run in the battle's ordinary setting (``ProbeSpec.setting``)."""
    control = None if variant.control is None else replace(variant.control, setting=ORDINARY)
    return replace(variant, spec=replace(variant.spec, setting=ORDINARY), control=control)


def _control_ok(family: Family, variant: Variant, trial: Trial) -> bool:
    """The family's control check; a control whose record is malformed did not answer as correct code does."""
    try:
        return family.control_ok(variant, trial)
    except untrusted.Malformed:
        return False


def _shrunk(leaf: Leaf, trial: Trial) -> Variant:
    """The family's smallest replay of ``trial``; the variant itself when the trial's record is malformed."""
    try:
        return leaf.family.shrink(leaf.variant, trial)
    except untrusted.Malformed:
        return leaf.variant


def _best(families: dict[str, list[Leaf]]) -> float:
    return max(leaf.variant.prior for leaves in families.values() for leaf in leaves)


def sandbox_runner(box: Sandbox, source: str, reference: str = "",
                   settings: tuple[Setting | None, ...] = (CLASSIC,)) -> ProbeRunner:
    """Probes run in ``box``: differential probes against the submission and, separately, the reference;
    every other probe as a driver (``driven.py``), the code answering in a process of its own, started in
    ``settings[spec.setting]`` (the battle's: ``setting.settings_of``)."""
    from logomesh.red.attacks.differential import PROBE, DifferentialRunner
    from logomesh.red.driven import run_driven

    differential = DifferentialRunner(box, source, reference) if reference else None

    def run(spec: ProbeSpec, seed: int) -> ProbeRun:
        setting = settings[spec.setting % len(settings)]
        if spec.probe == PROBE:
            if differential is None:
                return ProbeRun((), harness_error="no reference to compare with")
            return differential.run(spec, seed, setting)
        return run_driven(box, source, spec, seed, setting)

    return run


def _rarer(classic: list[int], ordinary: list[int]) -> bool:
    """Whether ``classic`` hits of trials is a lower rate than ``ordinary``'s at ``SETTING_P`` (one-sided Fisher
    exact test): a difference no shared rate explains."""
    if not classic[1] or not ordinary[1]:
        return False
    import numpy as np  # only for a confirmed race: scipy.stats takes ~0.3 s to import
    from scipy.stats import fisher_exact

    table = np.array([[ordinary[0], ordinary[1] - ordinary[0]], [classic[0], classic[1] - classic[0]]])
    return bool(fisher_exact(table, alternative="greater").pvalue < SETTING_P)
