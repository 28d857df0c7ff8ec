"""Small statistics for campaign reports: Student t quantiles and 95% confidence intervals.

Reports use ``bounded_mean_ci95`` (why the t interval, clipped, and nothing below
three values: see its docstring); ``mean_ci95`` is the plain t interval under it.

No scipy: the t quantile is found by bisection on the t distribution's CDF,
which is written with the regularized incomplete beta function
(``P(|T| > t) = I_x(df/2, 1/2)`` with ``x = df / (df + t^2)``), evaluated by
its continued fraction (Lentz's method, as in Numerical Recipes ``betacf``).
That is exact to well below the precision a report prints, for every df.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

_TINY = 1e-300
_EPS = 1e-15
_MAX_TERMS = 100_000


def _beta_continued_fraction(a: float, b: float, x: float) -> float:
    """The continued fraction of I_x(a, b), converging fast for x < (a + 1) / (a + b + 2)."""
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c = 1.0
    d = 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > _TINY else _TINY)
    h = d
    for m in range(1, _MAX_TERMS + 1):
        m2 = 2 * m
        for aa in (m * (b - m) * x / ((qam + m2) * (a + m2)), -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))):
            d = 1.0 + aa * d
            d = 1.0 / (d if abs(d) > _TINY else _TINY)
            c = 1.0 + aa / c
            c = c if abs(c) > _TINY else _TINY
            delta = d * c
            h *= delta
        if abs(delta - 1.0) < _EPS:
            return h
    raise ArithmeticError(f"incomplete beta did not converge for a={a}, b={b}, x={x}")


def regularized_incomplete_beta(a: float, b: float, x: float) -> float:
    """I_x(a, b) for a, b > 0 and 0 <= x <= 1."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    log_front = math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)
    front = math.exp(log_front)
    if x < (a + 1.0) / (a + b + 2.0):
        return front * _beta_continued_fraction(a, b, x) / a
    return 1.0 - front * _beta_continued_fraction(b, a, 1.0 - x) / b


def t_upper_tail(t: float, df: int) -> float:
    """P(T > t) for Student's t with ``df`` degrees of freedom, t >= 0."""
    return 0.5 * regularized_incomplete_beta(df / 2.0, 0.5, df / (df + t * t))


def t_quantile(p: float, df: int) -> float:
    """The ``p`` quantile of Student's t with ``df`` degrees of freedom, e.g. ``t_quantile(0.975, 4) ≈ 2.7764``."""
    if not 0.0 < p < 1.0:
        raise ValueError(f"t_quantile: p must lie strictly between 0 and 1, not {p!r}")
    if df < 1:
        raise ValueError(f"t_quantile: df must be at least 1, not {df!r}")
    if p == 0.5:
        return 0.0
    if p < 0.5:
        return -t_quantile(1.0 - p, df)
    tail = 1.0 - p
    low, high = 0.0, 2.0
    while t_upper_tail(high, df) > tail:
        low, high = high, high * 2.0
    for _ in range(400):
        mid = 0.5 * (low + high)
        if t_upper_tail(mid, df) > tail:
            low = mid
        else:
            high = mid
        if high - low <= 1e-13 * high:
            break
    return 0.5 * (low + high)


def mean_ci95(values: Sequence[float]) -> tuple[float, float, float]:
    """(mean, low, high): the two-sided 95% Student t interval of the mean; one value gives (v, v, v).

    Unbounded: for scores known to lie in a range, use ``bounded_mean_ci95``.
    """
    data = [float(v) for v in values]
    if not data:
        raise ValueError("mean_ci95: no values")
    if not all(math.isfinite(v) for v in data):
        raise ValueError("mean_ci95: values must be finite numbers")
    n = len(data)
    mean = math.fsum(data) / n
    if n == 1:
        return mean, mean, mean
    variance = math.fsum((v - mean) ** 2 for v in data) / (n - 1)
    half = t_quantile(0.975, n - 1) * math.sqrt(variance / n)
    return mean, mean - half, mean + half


MIN_INTERVAL_VALUES = 3
"""Below this many values a report shows no interval (``n/a``)."""


def bounded_mean_ci95(values: Sequence[float], lower: float = 0.0,
                      upper: float = 1.0) -> tuple[float, float | None, float | None]:
    """(mean, low, high) of values known to lie in [lower, upper]: the 95% t interval clipped to that range.

    Clipping is sound, not cosmetic: the true mean lies in [lower, upper], so
    whenever the t interval covers it, the clipped interval covers it too; the
    coverage is the t interval's, and no impossible value is shown (unclipped,
    CIS values 0.3 and 0.9 gave [-3.21, 4.41]).

    The alternatives fit worse. A Wilson interval is for a proportion of
    successes; it would treat CIS as a coin, ignore the observed spread and stay
    wide when every repeat scored alike. A percentile bootstrap needs a seed and,
    with the 3 to 5 repeats a campaign has, draws from a handful of distinct
    resample means and covers the true mean far less than 95% of the time.

    Below ``MIN_INTERVAL_VALUES`` values there is no interval (``None``): one
    value has no spread, and with two the t quantile is 12.7, so the clipped
    interval is nearly always all of [lower, upper] and says nothing.
    """
    mean, low, high = mean_ci95(values)
    if len(values) < MIN_INTERVAL_VALUES:
        return mean, None, None
    return mean, min(upper, max(lower, low)), max(lower, min(upper, high))
