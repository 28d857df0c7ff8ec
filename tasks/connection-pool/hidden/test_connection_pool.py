"""Hidden drivers for ConnectionPool: reuse, limits, timeouts, ownership and concurrency.

Drivers record what the pool hands out and raises (``see``, ``call``,
``raised``); connections are observed by identity (the k-th distinct object
a test sees), so "the same connection again" is checked without the fake
connections' always-true ``==``. The host compares the record with the
reference solution's; no expected value appears here. Wall-time bounds
(``@within``) are measured outside the process.
"""

import itertools
import threading
import time

from observe import call, raised, see, within
from solution import ConnectionPool


class Conn:
    """A fake connection; instances compare equal so pools must track identity."""

    def __init__(self, n):
        self.n = n

    def __eq__(self, other):
        return isinstance(other, Conn)

    __hash__ = None  # unhashable, like many real client objects


class CountingFactory:
    """Makes numbered Conns and keeps every one it made, in order."""

    def __init__(self):
        self.calls = 0
        self.made = []
        self._lock = threading.Lock()
        self._ids = itertools.count()

    def __call__(self):
        with self._lock:
            self.calls += 1
            conn = Conn(next(self._ids))
            self.made.append(conn)
            return conn


def in_thread(func, *args, **kwargs):
    """Run ``func`` in a daemon thread; returns the thread and a list that gets its outcome."""
    outcome = []

    def run():
        try:
            outcome.append(("returned", func(*args, **kwargs)))
        except BaseException as exc:
            outcome.append(("raised", exc))

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread, outcome


def observe_outcomes(outcomes):
    """Record what threads got: returned connections by ``n`` order (arrival order is scheduling), then errors."""
    returned = [value for kind, value in outcomes if kind == "returned"]
    see(sorted(returned, key=lambda conn: getattr(conn, "n", -1)))
    for exc in sorted((value for kind, value in outcomes if kind == "raised"), key=lambda e: type(e).__name__):
        with raised():
            raise exc


def run_workers(target, count, wait_s=8.0):
    """Start ``count`` daemon threads together; after all end (or ``wait_s``) return how many still run.

    One bounded wait for all of them, so deadlocked workers cost ``wait_s`` once, not once per thread.
    """
    barrier = threading.Barrier(count)
    lock = threading.Lock()
    all_ended = threading.Event()
    ended = [0]

    def wrapped():
        try:
            barrier.wait()
            target()
        finally:
            with lock:
                ended[0] += 1
                if ended[0] == count:
                    all_ended.set()

    threads = [threading.Thread(target=wrapped, daemon=True) for _ in range(count)]
    for t in threads:
        t.start()
    if all_ended.wait(wait_s):
        for t in threads:
            t.join()
    with lock:
        return count - ended[0]


class TestBasics:
    def test_creates_lazily(self):
        factory = CountingFactory()
        pool = ConnectionPool(factory, 3)
        see(factory.calls)
        see(pool.acquire())
        see(factory.calls)
        see(factory.made)

    def test_released_connection_is_reused(self):
        factory = CountingFactory()
        pool = ConnectionPool(factory, 3)
        first = see(pool.acquire())
        call(pool.release, first)
        see(pool.acquire())
        see(factory.calls)

    def test_up_to_max_size_distinct_connections(self):
        factory = CountingFactory()
        pool = ConnectionPool(factory, 4)
        for _ in range(5):
            call(pool.acquire, timeout=0)
        see(factory.calls)
        see(factory.made)

    def test_invalid_max_size(self):
        for size in (0, 1, -1, 3, -100):
            pool = call(ConnectionPool, CountingFactory(), size)
            if pool is not None:
                call(pool.acquire, timeout=0)

    def test_negative_timeout(self):
        factory = CountingFactory()
        pool = ConnectionPool(factory, 2)
        for timeout in (-1, 0, -0.5, None, -1e-9):
            call(pool.acquire, timeout=timeout)
        see(factory.calls)

    def test_factory_error_propagates_and_frees_the_slot(self):
        attempts = []

        def flaky():
            attempts.append(1)
            if len(attempts) == 1:
                raise ConnectionError("database down")
            return Conn(len(attempts))

        pool = ConnectionPool(flaky, 1)
        call(pool.acquire, timeout=0)
        conn = call(pool.acquire, timeout=0)
        see(getattr(conn, "n", None))
        see(len(attempts))


class TestTimeouts:
    @within(max_s=0.5, clock="wall")
    def test_exhausted_pool_with_zero_timeout(self):
        factory = CountingFactory()
        pool = ConnectionPool(factory, 2)
        for _ in range(3):
            call(pool.acquire, timeout=0)
        call(pool.acquire, timeout=0)
        see(factory.calls)

    @within(min_s=0.08, max_s=2.0, clock="wall")
    def test_positive_timeout_waits_then_raises(self):
        pool = ConnectionPool(CountingFactory(), 1)
        call(pool.acquire, timeout=0.1)
        call(pool.acquire, timeout=0.1)

    def test_waiter_gets_connection_released_by_another_thread(self):
        pool = ConnectionPool(CountingFactory(), 1)
        held = see(pool.acquire())
        waiter, got = in_thread(pool.acquire, timeout=5)
        time.sleep(0.05)  # room for a wrong acquire to return early; not a measurement
        see(len(got))
        call(pool.release, held)
        waiter.join(5)
        observe_outcomes(got)

    def test_acquire_without_timeout_blocks_until_release(self):
        pool = ConnectionPool(CountingFactory(), 1)
        held = see(pool.acquire())
        waiter, got = in_thread(pool.acquire)
        waiter.join(0.1)
        see(len(got))
        call(pool.release, held)
        waiter.join(5)
        observe_outcomes(got)

    def test_timeout_does_not_leak_a_slot(self):
        factory = CountingFactory()
        pool = ConnectionPool(factory, 1)
        held = see(pool.acquire())
        for _ in range(3):
            call(pool.acquire, timeout=0.01)
        call(pool.release, held)
        call(pool.acquire, timeout=0)
        see(factory.calls)


class TestOwnership:
    def test_release_of_foreign_objects_rejected(self):
        pool = ConnectionPool(CountingFactory(), 2)
        other = ConnectionPool(CountingFactory(), 2)
        mine = see(pool.acquire())
        theirs = see(other.acquire())
        for candidate in (Conn(99), theirs, object(), None, mine, mine):
            call(pool.release, candidate)
        call(pool.acquire, timeout=0)
        call(other.release, theirs)

    def test_equal_but_different_object_rejected(self):
        pool = ConnectionPool(CountingFactory(), 1)
        conn = see(pool.acquire())
        lookalike = Conn(conn.n)
        call(pool.release, lookalike)
        call(pool.release, conn)
        call(pool.acquire, timeout=0)
        call(pool.acquire, timeout=0)

    def test_double_release_rejected_and_pool_not_corrupted(self):
        factory = CountingFactory()
        pool = ConnectionPool(factory, 2)
        a = see(pool.acquire())
        call(pool.release, a)
        call(pool.release, a)
        call(pool.acquire, timeout=0)
        call(pool.acquire, timeout=0)
        call(pool.acquire, timeout=0)
        see(factory.calls)


class TestConcurrency:
    def test_stress_never_exceeds_max_size(self):
        factory = CountingFactory()
        pool = ConnectionPool(factory, 3)
        state_lock = threading.Lock()
        holders = {}
        counts = {"handed to two threads": 0, "worker errors": 0, "rounds": 0}
        peak = [0]

        def worker():
            try:
                for _ in range(150):
                    conn = pool.acquire(timeout=5)
                    with state_lock:
                        if id(conn) in holders:
                            counts["handed to two threads"] += 1
                        holders[id(conn)] = conn
                        peak[0] = max(peak[0], len(holders))
                    time.sleep(0.0002)  # hold it a moment, so the pool runs at its limit
                    with state_lock:
                        del holders[id(conn)]
                    pool.release(conn)
                    with state_lock:
                        counts["rounds"] += 1
            except Exception:
                with state_lock:
                    counts["worker errors"] += 1

        see(run_workers(worker, 8))
        with state_lock:
            see(counts)
            # Below max_size the peak and the number created depend on scheduling; above it they are a defect.
            see(max(peak[0], 3))
            see(max(factory.calls, 3))

    def test_every_waiter_is_served(self):
        pool = ConnectionPool(CountingFactory(), 2)
        held = see([pool.acquire(), pool.acquire()])
        waiters = [in_thread(pool.acquire, timeout=5) for _ in range(2)]
        time.sleep(0.05)  # room for a wrong acquire to return early; not a measurement
        see([len(got) for _, got in waiters])
        for conn in held:
            call(pool.release, conn)
        for thread, _ in waiters:
            thread.join(5)
        observe_outcomes([outcome for _, got in waiters for outcome in got])
