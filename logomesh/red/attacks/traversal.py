"""Path traversal (CWE-22) and symlink following (CWE-59) against a temporary base with a secret outside."""

from __future__ import annotations

import random

from logomesh import untrusted
from logomesh.red.attacks.base import DIED, MISS, Family, Variant, Verdict, did_not_survive
from logomesh.red.context import AttackContext
from logomesh.red.executor import ProbeSpec, Trial

# (id, payload, cwe, prior)
PAYLOADS = (
    ("dotdot", "../outside/secret.txt", "CWE-22", 0.8),
    ("inner-dotdot", "docs/../../outside/secret.txt", "CWE-22", 0.7),
    ("absolute", "{secret}", "CWE-22", 0.7),
    ("symlink-dir", "link/secret.txt", "CWE-59", 0.6),
    ("symlink-file", "docs/shortcut.txt", "CWE-59", 0.6),
    ("sibling-prefix", "../base_evil/secret.txt", "CWE-22", 0.6),
    ("deep-dotdot", "docs/" + "../" * 12 + "etc/passwd", "CWE-22", 0.5),
)


def spelling(payload: str, rng: random.Random) -> str:
    """``payload`` as the battle spells it: a ``.`` segment, which names the same path to every path API, before
    some of its segments, so code that refuses one known payload has no fixed text to refuse. An absolute
    payload (the secret's own path, filled in by the probe) keeps its spelling."""
    if payload.startswith(("{", "/")):
        return payload
    parts = payload.split("/")
    out: list[str] = []
    for index, part in enumerate(parts):
        if index < len(parts) - 1 and rng.random() < 0.35:
            out.append(".")
        out.append(part)
    return "/".join(out)


class TraversalFamily(Family):
    name = "path-traversal"
    cwe = "CWE-22"
    severity = "high"
    rationale = ("high: a request names a file outside the served directory and gets its path, "
                 "so any readable file leaks (confidentiality), no privileges needed")
    probe = "traversal"
    markers = ("target", "payload", "{secret}", "inside", "secret", "returned")

    def variants(self, ctx: AttackContext, entry: str) -> list[Variant]:
        if entry not in ctx.features.functions or not ctx.declares(entry, "path-traversal"):
            return []
        lift = -0.2 if ctx.features.resolves_paths else 0.1
        rng = random.Random(f"path-traversal:{ctx.seed}")
        spelled = [(ident, spelling(payload, rng), cwe, prior) for ident, payload, cwe, prior in PAYLOADS]
        return [
            Variant(
                id=ident,
                spec=ProbeSpec("traversal", {"target": entry, "payload": payload}),
                reproducer=f"{entry}(base, {payload!r}) with base/link -> ../outside and "
                           "base/docs/shortcut.txt -> ../outside/secret.txt",
                control=ProbeSpec("traversal", {"target": entry, "payload": "docs/readme.txt"}),
                prior=max(0.05, min(0.95, prior + (lift if cwe == "CWE-22" else 0.0))),
                cwe=cwe,
            )
            for ident, payload, cwe, prior in spelled
        ]

    def judge(self, variant: Variant, trial: Trial) -> Verdict:
        if trial.status in DIED:
            return did_not_survive(trial)
        if trial.status != "ok":
            return MISS
        if not untrusted.flag(trial.result, "inside"):
            what = "the secret file" if untrusted.flag(trial.result, "secret") else "a path"
            return Verdict(True, 1.0, f"returned {what} outside base: ...{untrusted.text(trial.result, 'returned')}")
        return MISS

    def control_ok(self, variant: Variant, trial: Trial) -> bool:
        return trial.status == "ok" and untrusted.flag(trial.result, "inside")
