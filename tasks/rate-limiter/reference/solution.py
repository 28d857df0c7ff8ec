"""Per-key sliding-window rate limiter (exact, thread-safe, bounded memory)."""

from __future__ import annotations

import threading
import time
from collections import deque
from typing import Callable, Deque, Dict


class RateLimiter:
    """At most ``max_requests`` grants per key in any ``window_seconds`` of clock time.

    Each key keeps the timestamps of its grants still inside the window, oldest
    first, so a check is amortised O(1). Keys whose grants have all expired are
    dropped by a periodic sweep, so memory is bounded by the keys active in the
    last window rather than every key ever seen.
    """

    def __init__(
        self,
        max_requests: int,
        window_seconds: float,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if isinstance(max_requests, bool) or not isinstance(max_requests, int) or max_requests < 1:
            raise ValueError("max_requests must be a positive integer")
        if not window_seconds > 0:
            raise ValueError("window_seconds must be positive")
        self._max = max_requests
        self._window = float(window_seconds)
        self._clock = clock
        self._lock = threading.Lock()
        self._grants: Dict[str, Deque[float]] = {}
        self._calls_since_sweep = 0
        self._sweep_after = 64  # calls until the next sweep: max(64, keys left by the last sweep)

    def allow(self, key: str) -> bool:
        with self._lock:
            now = self._clock()
            self._maybe_sweep(now)
            grants = self._grants.get(key)
            if grants is None:
                grants = deque()
                self._grants[key] = grants
            self._expire(grants, now)
            if len(grants) >= self._max:
                return False
            grants.append(now)
            return True

    def _expire(self, grants: Deque[float], now: float) -> None:
        # A grant at t counts for readings in [t, t + window); drop it from t + window on.
        horizon = now - self._window
        while grants and grants[0] <= horizon:
            grants.popleft()

    def _maybe_sweep(self, now: float) -> None:
        """Drop idle keys every max(64, keys kept by the last sweep) calls: amortised O(1) per call.

        The interval is fixed when a sweep ends; measured against the current key
        count instead, a stream of new keys would keep pushing the sweep away.
        """
        self._calls_since_sweep += 1
        if self._calls_since_sweep < self._sweep_after:
            return
        self._calls_since_sweep = 0
        for key in list(self._grants):
            grants = self._grants[key]
            self._expire(grants, now)
            if not grants:
                del self._grants[key]
        self._sweep_after = max(64, len(self._grants))
