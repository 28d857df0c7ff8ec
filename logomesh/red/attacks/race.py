"""Races under threads (CWE-362): seeded opcode-level schedule perturbation inside the artifact's frames.

Plain barriers and ``sys.setswitchinterval`` rarely expose a check-then-act
race on CPython 3.11: the window is a few opcodes wide. The probe traces only
frames of ``solution.py`` with ``f_trace_opcodes`` and, at seeded random
opcodes, sleeps briefly so another thread runs inside the window. The oracles
are the task's invariants, checked by the task's own race scenario
(``[red.race]`` in its task.toml, ``race()`` in its red.py; ``docs/tasks.md``).
"""

from __future__ import annotations

from logomesh import untrusted
from logomesh.findings import RACE
from logomesh.red.attacks.base import DIED, MISS, Family, Variant, Verdict
from logomesh.red.context import AttackContext
from logomesh.red.executor import TASK_MODULE, ProbeSpec, Trial
from logomesh.red.history import linearizability

CHANCES = (0.05, 0.02, 0.12)
RACE_CONFIRMATION = """A race is confirmed by one invariant violation in 10 replays, not by a majority.

The scenarios' invariants are exact (grants counted, money summed, a connection held twice), so a single
violation is proof; correct code (each task's good and reference, 3 variants, 100 perturbed trials each)
showed 0 violations in 2,400 trials. A majority rule made the verdict a coin toss where the hit rate sits
near one half (the issue saw a pool race confirmed at exactly 5/10); with one of 10, a race whose trials
hit with probability p is missed at confirmation with probability (1 - p)^10: below 10^-3 for p >= 0.50,
and the library's race variants measured p >= 0.57 (benchmarks/race_stability.py, 100 trials each). The
three variants differ only in the chance of a yield, so a finding names them as one ("perturb"): which of
them hit first is luck, and the result holds only what the seed and the code fix."""


class RaceFamily(Family):
    name = RACE
    cwe = "CWE-362"
    severity = "high"
    rationale = ("high: a concurrent caller breaks a safety invariant the contract promises (limits bypassed, "
                 "money created or lost, a resource shared); needs concurrency, not privileges")
    probe = "race"
    markers = ("violations", "observed", "history")  # threads and chance go to the task's own red.py

    def variants(self, ctx: AttackContext, entry: str) -> list[Variant]:
        scenario = ctx.red.scenario("race", entry)
        if scenario is None or not ctx.defines(entry):
            return []
        story, base = scenario.story, {TASK_MODULE: ctx.red.module, **scenario.args}
        prior = 0.35 if ctx.features.uses_lock else 0.85
        control = ProbeSpec("race", {**base, "threads": 1, "chance": 0.0}, timeout_s=5.0)
        chances = ", ".join(f"{c:g}" for c in CHANCES)
        reproducer = (f"{base.get('threads', 6)} {story}, yielding at random opcodes inside solution.py "
                      f"with p in ({chances})")
        out = []
        for chance in CHANCES:
            args = {**base, "chance": chance}
            out.append(Variant(
                id=f"perturb-p{int(chance * 100):02d}",
                spec=ProbeSpec("race", args, trials=4, timeout_s=6.0),
                reproducer=reproducer,  # one for the three: the chance that hit first is luck, not the code
                reported_as="perturb",
                control=control,
                prior=prior if chance == CHANCES[0] else prior * 0.8,
                repeatable=True,
                confirm_trials=10,
                confirm_quorum=0.0,  # one violation proves it: see RACE_CONFIRMATION
                oracle=ctx.red.oracle("race"),
                model=ctx.red.subject(ctx.task.reference, scenario.args),
            ))
        return out

    def judge(self, variant: Variant, trial: Trial) -> Verdict:
        if trial.status in DIED:
            return Verdict(True, 1.0, f"the code did not survive the race probe ({trial.status}); the benign "
                                      "control, run without the probe's instruments, answered")
        if trial.status != "ok":
            return MISS
        violations = self.violations(variant, variant.spec, trial)
        if violations:
            return Verdict(True, 1.0, str(violations[0]))
        unexplained = self.unexplained(variant, trial)
        if unexplained:  # a race only if the code's serial answers are the reference's: the control decides
            return Verdict(True, 1.0, unexplained[0], needs_clean_control=True)
        if unexplained is None:  # the search gave up: the control says whether searching is worth it
            return Verdict(False, 0.0, needs_clean_control=True)
        return MISS

    def control_ok(self, variant: Variant, trial: Trial) -> bool:
        spec = variant.control or variant.spec
        return trial.status == "ok" and not self.violations(variant, spec, trial) \
            and not self.unexplained(variant, trial)  # a search that gave up (None) is no evidence

    @staticmethod
    def unexplained(variant: Variant, trial: Trial) -> list[str] | None:
        """What no serial order of the reference explains in the trial's client-side history (``history.py``),
        None where the search gave up: checked where the task's red.py builds a ``subject`` for the model."""
        return [] if variant.model is None else linearizability(trial.result.get("history"), variant.model)

    @staticmethod
    def violations(variant: Variant, spec: ProbeSpec, trial: Trial) -> list[str]:
        """The invariants a trial of ``spec`` broke: judged here from what the scenario recorded, where the
        task's red.py has a ``check_race``; otherwise as the scenario reported them from the box. A record
        without what it must hold (the scenario always writes it) is a violation, never a clean trial."""
        try:
            if variant.oracle is None:
                return [str(v)[:200] for v in untrusted.items(trial.result, "violations")]
            observed = untrusted.mapping(trial.result, "observed")
        except untrusted.Malformed as exc:
            return [f"the race scenario's record is malformed ({exc})"[:200]]
        args = {k: v for k, v in spec.args.items() if k != TASK_MODULE}
        try:
            return [str(v) for v in variant.oracle(args, observed)]
        except Exception as exc:  # a record the scenario could not have written: the code rewrote it
            return [f"the race scenario's record is malformed ({type(exc).__name__}: {exc})"[:200]]
