"""Code injection through eval/exec (CWE-95): expressions only an evaluator of code would honour."""

from __future__ import annotations

from logomesh import untrusted
from logomesh.red.attacks.base import DIED, MISS, Family, Variant, Verdict, did_not_survive
from logomesh.red.context import AttackContext
from logomesh.red.executor import ProbeSpec, Trial

# (id, payload, what proves evaluation, prior). The last two need no builtins at all.
PAYLOADS = (
    ("canary-mkdir", "__import__('os').mkdir('{canary}') or 1", "canary", 0.9),
    ("builtin-call", "len('x' * 4242)", "4242", 0.8),
    ("attribute-walk", "(1).__class__.__name__.__len__() * 1414", "4242", 0.7),
    ("subclass-escape", "[c for c in ().__class__.__base__.__subclasses__() if c.__name__ == '_wrap_close'][0]"
                        ".__init__.__globals__['mkdir']('{canary}') or 1", "canary", 0.6),
)
_CODE_RUNNERS = ("eval", "exec", "compile", "builtins.eval", "builtins.exec")


class EvalInjectionFamily(Family):
    name = "code-injection"
    cwe = "CWE-95"
    severity = "critical"
    rationale = "critical: the input runs as code in the caller's process: full compromise, no privileges needed"
    probe = "eval"
    markers = ("target", "payload", "{canary}", "canary", "repr")

    def variants(self, ctx: AttackContext, entry: str) -> list[Variant]:
        if entry not in ctx.features.functions:
            return []
        runs_code = ctx.features.has_call(*_CODE_RUNNERS)
        if not runs_code and not ctx.declares(entry, "code-injection"):
            return []
        prior_lift = 0.05 if runs_code else -0.5
        # eval(..., {"__builtins__": {}}) blocks names, not attribute walks: lead with those
        restricted = "__builtins__" in ctx.source
        return [
            Variant(
                id=ident,
                spec=ProbeSpec("eval", {"target": entry, "payload": payload}),
                reproducer=f"{entry}({payload!r})",
                control=ProbeSpec("eval", {"target": entry, "payload": "1 + 2"}),
                prior=max(0.05, min(0.97, prior + prior_lift + (0.3 if restricted and index >= 2 else 0.0))),
            )
            for index, (ident, payload, _, prior) in enumerate(PAYLOADS)
        ]

    def judge(self, variant: Variant, trial: Trial) -> Verdict:
        if trial.status in DIED:
            return did_not_survive(trial)
        if trial.status != "ok":
            return MISS
        if untrusted.flag(trial.result, "canary"):
            return Verdict(True, 1.0, "the expression created a directory on disk")
        proof = next(p[2] for p in PAYLOADS if p[0] == variant.id)
        if proof != "canary" and untrusted.text(trial.result, "repr") == proof:
            return Verdict(True, 1.0, f"the expression was executed as Python and returned {proof}")
        return MISS

    def control_ok(self, variant: Variant, trial: Trial) -> bool:
        return trial.status == "ok" and untrusted.text(trial.result, "repr") == "3"
