"""Unbounded memory growth (CWE-770): state the contract lets the artifact drop must not pile up."""

from __future__ import annotations

from logomesh.red.attacks.base import MISS, Family, Variant, Verdict
from logomesh.red.context import AttackContext
from logomesh.red.executor import ProbeSpec, Trial

SCENARIOS = {
    "RateLimiter": ("rate-limiter", "allow(f'key-{i}') for i in range(n) with the clock advancing 0.01 s per call "
                    "and window_seconds=1.0 (about 100 keys live at once)"),
    "LRUCache": ("lru-cache", "LRUCache(4): put 4 keys, then n times get(i % 4) and put(i % 4, i)"),
    "ConnectionPool": ("connection-pool", "ConnectionPool(object, 2): n times release(acquire())"),
    "merkle_root": ("merkle-root", "n calls merkle_root([b'leaf-%d' % i, b'other-%d' % i]); nothing is kept"),
}
SIZES = (2000, 8000)
MIN_GROWTH_BYTES = 400_000
MIN_RATIO = 2.5


class GrowthFamily(Family):
    name = "resource-growth"
    cwe = "CWE-770"
    severity = "medium"
    rationale = ("medium: availability only; a long-running caller exhausts memory with ordinary requests, "
                 "no confidentiality or integrity impact")

    def variants(self, ctx: AttackContext, entry: str) -> list[Variant]:
        if entry not in SCENARIOS or (entry not in ctx.features.classes and entry not in ctx.features.functions):
            return []
        scenario, story = SCENARIOS[entry]
        return [Variant(
            id="steady-churn",
            spec=ProbeSpec("growth", {"scenario": scenario, "sizes": list(SIZES)}, timeout_s=8.0,
                           memory_bytes=256 * 1024 * 1024),
            reproducer=f"{story}; compare retained memory at n={SIZES[0]} and n={SIZES[1]}",
            control=ProbeSpec("growth", {"scenario": scenario, "sizes": [100]}, timeout_s=5.0),
            prior=0.4 if ctx.features.drops_state else 0.8,
        )]

    def judge(self, variant: Variant, trial: Trial) -> Verdict:
        points = trial.result.get("points") or [] if trial.status == "ok" else []
        if len(points) < 2:
            return MISS
        small, large = int(points[0]["bytes"]), int(points[-1]["bytes"])
        ratio = large / max(small, 1)
        score = min(0.9, ratio / (MIN_RATIO * 2))
        if ratio >= MIN_RATIO and large - small >= MIN_GROWTH_BYTES:
            return Verdict(True, 1.0, f"retained memory grew from {small} B at n={points[0]['n']} to {large} B at "
                                      f"n={points[-1]['n']} although the live state is bounded")
        return Verdict(False, score)
