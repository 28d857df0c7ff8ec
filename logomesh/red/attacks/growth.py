"""Unbounded memory growth (CWE-770): state the contract lets the artifact drop must not pile up.

The driver is the task's own (``[red.growth]`` in its task.toml, ``grow(size)``
in its red.py; ``docs/tasks.md``): ``size`` operations whose state the
contract lets the artifact drop. Retained memory is measured at two sizes,
from outside the code's process: the probe runs as a driver and reads the
code's processes' ``Pss_Anon + Pss_Shmem`` from the kernel before and after
``grow(size)`` (``probes/library.py::memory_of``), and the bytes in use on the
box's tmpfs mounts (``tmpfs_bytes``), so memory kept in anonymous ``mmap``, in
a forked child or in a file under ``/tmp`` counts, and stopping tracemalloc
changes nothing.

The answerer cannot be made to collect garbage and keeps its freed heap, and
every run's result stays alive to the end of the probe (``probe_growth``), so
a correct implementation reads its live state, the same at both sizes (the
rate-limiter's good solution about 280 kB, its window's keys; most others 0-4
kB), while every submission labelled with a growth defect retains 0.97-6.6
MB at n=8000 (Docker and bubblewrap alike). ``MIN_GROWTH_BYTES`` lies
between.

The verdict is the growth between the two sizes, in bytes, not a ratio: code
that keeps a fixed ballast (or churns its heap at the first calls) lifts the
small reading and would defeat any ratio, while what it retains per
operation still shows in the difference (a leaking cache that restarted
tracemalloc on every put read 356 kB at n=2000 and 889 kB at n=8000: a ratio
of 2.49, a growth of 533 kB). The ratio only shades the score of a miss.
"""

from __future__ import annotations

from logomesh import untrusted
from logomesh.red.attacks.base import DIED, MISS, Family, Variant, Verdict, did_not_survive
from logomesh.red.context import AttackContext
from logomesh.red.executor import TASK_MODULE, ProbeSpec, Trial

SIZES = (2000, 8000)
MIN_GROWTH_BYTES = 400_000
MIN_RATIO = 2.5  # a miss's score only


class GrowthFamily(Family):
    name = "resource-growth"
    cwe = "CWE-770"
    severity = "medium"
    rationale = ("medium: availability only; a long-running caller exhausts memory with ordinary requests, "
                 "no confidentiality or integrity impact")
    probe = "growth"
    markers = ("sizes", "tampered", "points", "n", "bytes")

    def variants(self, ctx: AttackContext, entry: str) -> list[Variant]:
        scenario = ctx.red.scenario("growth", entry)
        if scenario is None or not ctx.defines(entry):
            return []
        base = {TASK_MODULE: ctx.red.module, **scenario.args}
        return [Variant(
            id="steady-churn",
            spec=ProbeSpec("growth", {**base, "sizes": list(SIZES)}, timeout_s=8.0),
            reproducer=f"{scenario.story}; compare retained memory at n={SIZES[0]} and n={SIZES[1]}",
            control=ProbeSpec("growth", {**base, "sizes": [100]}, timeout_s=5.0),
            prior=0.4 if ctx.features.drops_state else 0.8,
        )]

    def judge(self, variant: Variant, trial: Trial) -> Verdict:
        if trial.status in DIED:  # code that ends or hangs itself once it holds many entries is not bounded
            return did_not_survive(trial)
        if trial.status != "ok":
            return MISS
        tampered = untrusted.optional_text(trial.result, "tampered")
        if tampered:
            return Verdict(True, 1.0, tampered)  # what cannot be measured is not bounded
        points = [(untrusted.integer(p, "n"), untrusted.integer(p, "bytes"))
                  for p in untrusted.objects(trial.result, "points")]
        if [n for n, _ in points] != list(variant.spec.args.get("sizes", [])):
            raise untrusted.Malformed("the growth probe measured other sizes than it was given")
        if len(points) < 2:
            return MISS
        (small_n, small), (large_n, large) = points[0], points[-1]
        score = min(0.9, max(large - small, 0) / (MIN_GROWTH_BYTES * 2), large / max(small, 1) / (MIN_RATIO * 2))
        if large - small >= MIN_GROWTH_BYTES:
            return Verdict(True, 1.0, f"retained memory grew from {small} B at n={small_n} to {large} B at "
                                      f"n={large_n} although the live state is bounded")
        return Verdict(False, score)
