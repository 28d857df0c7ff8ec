"""Fibonacci numbers by recursive fast doubling: O(log n) depth, no loops."""

from __future__ import annotations

from typing import Tuple


def _pair(n: int) -> Tuple[int, int]:
    """(F(n), F(n+1)) from F(k), F(k+1) with k = n // 2:

    F(2k)   = F(k) * (2 F(k+1) - F(k))
    F(2k+1) = F(k)^2 + F(k+1)^2
    """
    if n == 0:
        return 0, 1
    a, b = _pair(n // 2)
    even = a * (2 * b - a)
    odd = a * a + b * b
    return (odd, even + odd) if n % 2 else (even, odd)


def fib(n: int) -> int:
    if isinstance(n, bool) or not isinstance(n, int):
        raise TypeError(f"n must be an int, got {type(n).__name__}")
    if n < 0:
        raise ValueError("n must be non-negative")
    return _pair(n)[0]
