"""The statistics of a campaign report, from scipy: intervals that treat the task as the unit, and paired tests.

Every figure says what it rests on (``n``) and, where it cannot be computed,
why (``reason``) instead of a number:

* ``task_mean_interval``: the mean over tasks of each task's mean CIS, with a
  95% Student t interval on the task means (df = tasks - 1), clipped to [0, 1].
  Repeats of one task are a cluster, not independent samples: with equal
  repeats per task this is exactly the cluster-robust (CR1) interval of the
  pooled mean, clustered by task. Identical repeats therefore add no false
  certainty; below two tasks, or when every task has the same mean, there is
  no interval.
* ``paired_bootstrap``: the mean of per-task differences between two agents
  with a 95% percentile bootstrap interval over the shared tasks (tasks
  resampled with replacement, seeded, ``BOOTSTRAP_RESAMPLES`` resamples);
  refused below ``MIN_PAIRED_TASKS`` shared tasks, where a bootstrap has too
  few distinct resamples to mean anything.
* ``wilson``: the Wilson score interval of a proportion.
* ``mcnemar_exact``: the exact (binomial) McNemar test on discordant pairs.
* ``pass_at_k`` / ``pass_hat_k``: the unbiased estimators of "at least one of
  k tries passes" and "all k tries pass" from n tries with c passes.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy import stats as sps
from scipy.special import comb

CONFIDENCE = 0.95
SPREAD_TOLERANCE = 1e-9
"""Values closer than this are alike: float rounding must not turn 'no spread' into a zero-width interval."""
BOOTSTRAP_RESAMPLES = 9999
MIN_PAIRED_TASKS = 5
"""A paired bootstrap over fewer shared tasks is refused: with 4 tasks there are only 35 distinct resamples."""


@dataclass(frozen=True)
class Interval:
    """A 95% interval resting on ``n`` units, or (``low``/``high`` None) the ``reason`` there is none."""

    low: float | None
    high: float | None
    n: int
    reason: str | None = None

    @property
    def ok(self) -> bool:
        return self.low is not None and self.high is not None

    def contains(self, value: float) -> bool:
        """True when ``value`` lies in the interval, and when there is no interval (nothing is excluded)."""
        if self.low is None or self.high is None:
            return True
        return self.low <= value <= self.high


def refused(n: int, reason: str) -> Interval:
    return Interval(None, None, n, reason)


def _finite(values: Sequence[float], what: str) -> list[float]:
    data = [float(v) for v in values]
    if not all(math.isfinite(v) for v in data):
        raise ValueError(f"{what}: values must be finite numbers")
    return data


def task_mean_interval(task_means: Sequence[float], lower: float = 0.0, upper: float = 1.0) -> Interval:
    """The 95% t interval of the mean of ``task_means`` (one value per task), clipped to [lower, upper].

    Clipping keeps the coverage: the true mean lies in the range, so whenever the
    t interval covers it the clipped one does too.
    """
    data = _finite(task_means, "task_mean_interval")
    n = len(data)
    if n < 2:
        return refused(n, f"{n} task: the task is the unit, an interval needs at least 2")
    if max(data) - min(data) <= SPREAD_TOLERANCE:
        return refused(n, f"all {n} tasks have the same mean {data[0]:.4f}: no spread to estimate an interval from")
    result = sps.ttest_1samp(np.asarray(data), popmean=0.0)
    ci = result.confidence_interval(confidence_level=CONFIDENCE)
    return Interval(min(upper, max(lower, float(ci.low))), max(lower, min(upper, float(ci.high))), n)


def stable_seed(*parts: object) -> int:
    """A 64-bit seed from ``parts`` (campaign seed, agent names): the same on every machine and run."""
    digest = hashlib.sha256("\x00".join(str(p) for p in parts).encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big")


def paired_bootstrap(differences: Sequence[float], seed: int) -> Interval:
    """The 95% percentile bootstrap interval of the mean of per-task ``differences``, resampling tasks."""
    data = _finite(differences, "paired_bootstrap")
    n = len(data)
    if n < MIN_PAIRED_TASKS:
        return refused(n, f"{n} shared tasks: a paired bootstrap needs at least {MIN_PAIRED_TASKS}")
    if max(data) - min(data) <= SPREAD_TOLERANCE:
        return refused(n, f"all {n} shared tasks differ by exactly {data[0]:.4f}: no spread to resample")
    result = sps.bootstrap((np.asarray(data),), np.mean, n_resamples=BOOTSTRAP_RESAMPLES,
                           confidence_level=CONFIDENCE, method="percentile", rng=np.random.default_rng(seed))
    ci = result.confidence_interval
    return Interval(float(ci.low), float(ci.high), n)


def wilson(successes: int, trials: int) -> Interval:
    """The 95% Wilson score interval of ``successes / trials``."""
    if trials < 1:
        return refused(0, "no trials")
    ci = sps.binomtest(successes, trials).proportion_ci(confidence_level=CONFIDENCE, method="wilson")
    return Interval(float(ci.low), float(ci.high), trials)


def mcnemar_exact(first_only: int, second_only: int) -> float | None:
    """The two-sided exact McNemar p-value from the discordant pairs; ``None`` when there are none."""
    discordant = first_only + second_only
    if discordant == 0:
        return None
    return float(sps.binomtest(first_only, discordant, 0.5).pvalue)


def pass_at_k(n: int, c: int, k: int) -> float:
    """P(at least one of k tries passes), unbiased from n tries with c passes (Chen et al. 2021)."""
    if not 0 <= c <= n or not 1 <= k <= n:
        raise ValueError(f"pass_at_k: need 0 <= c <= n and 1 <= k <= n, not n={n}, c={c}, k={k}")
    return 1.0 - float(comb(n - c, k, exact=True)) / float(comb(n, k, exact=True))


def pass_hat_k(n: int, c: int, k: int) -> float:
    """P(all k tries pass), unbiased from n tries with c passes (pass^k, Yao et al. 2024)."""
    if not 0 <= c <= n or not 1 <= k <= n:
        raise ValueError(f"pass_hat_k: need 0 <= c <= n and 1 <= k <= n, not n={n}, c={c}, k={k}")
    return float(comb(c, k, exact=True)) / float(comb(n, k, exact=True))
