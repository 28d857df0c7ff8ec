"""Judge tests for ConnectionPool: reuse, limits, timeouts, ownership and concurrency."""

import itertools
import threading
import time
import unittest

from solution import ConnectionPool


class Conn:
    """A fake connection; instances compare equal so pools must track identity."""

    def __init__(self, n):
        self.n = n

    def __eq__(self, other):
        return isinstance(other, Conn)

    __hash__ = None  # unhashable, like many real client objects


class CountingFactory:
    def __init__(self):
        self.calls = 0
        self._lock = threading.Lock()
        self._ids = itertools.count()

    def __call__(self):
        with self._lock:
            self.calls += 1
            return Conn(next(self._ids))


def start_daemon(target, *args):
    thread = threading.Thread(target=target, args=args, daemon=True)
    thread.start()
    return thread


class TestBasics(unittest.TestCase):
    def test_creates_lazily(self):
        factory = CountingFactory()
        pool = ConnectionPool(factory, 3)
        self.assertEqual(factory.calls, 0)
        conn = pool.acquire()
        self.assertIsInstance(conn, Conn)
        self.assertEqual(factory.calls, 1)

    def test_released_connection_is_reused(self):
        factory = CountingFactory()
        pool = ConnectionPool(factory, 3)
        first = pool.acquire()
        pool.release(first)
        self.assertIs(pool.acquire(), first)
        self.assertEqual(factory.calls, 1)

    def test_up_to_max_size_distinct_connections(self):
        factory = CountingFactory()
        pool = ConnectionPool(factory, 4)
        conns = [pool.acquire(timeout=0) for _ in range(4)]
        self.assertEqual(len({id(c) for c in conns}), 4)
        self.assertEqual(factory.calls, 4)

    def test_invalid_max_size(self):
        for bad in (0, -1):
            with self.assertRaises(ValueError):
                ConnectionPool(CountingFactory(), bad)

    def test_negative_timeout(self):
        with self.assertRaises(ValueError):
            ConnectionPool(CountingFactory(), 1).acquire(timeout=-1)

    def test_factory_error_propagates_and_frees_the_slot(self):
        attempts = []

        def flaky():
            attempts.append(1)
            if len(attempts) == 1:
                raise ConnectionError("database down")
            return Conn(len(attempts))

        pool = ConnectionPool(flaky, 1)
        with self.assertRaises(ConnectionError):
            pool.acquire(timeout=0)
        conn = pool.acquire(timeout=0)
        self.assertEqual(conn.n, 2)


class TestTimeouts(unittest.TestCase):
    def test_exhausted_pool_with_zero_timeout(self):
        factory = CountingFactory()
        pool = ConnectionPool(factory, 2)
        pool.acquire()
        pool.acquire()
        started = time.monotonic()
        with self.assertRaises(TimeoutError):
            pool.acquire(timeout=0)
        self.assertLess(time.monotonic() - started, 0.5)
        self.assertEqual(factory.calls, 2)

    def test_positive_timeout_waits_then_raises(self):
        pool = ConnectionPool(CountingFactory(), 1)
        pool.acquire()
        started = time.monotonic()
        with self.assertRaises(TimeoutError):
            pool.acquire(timeout=0.1)
        elapsed = time.monotonic() - started
        self.assertGreaterEqual(elapsed, 0.08)
        self.assertLess(elapsed, 2.0)

    def test_waiter_gets_connection_released_by_another_thread(self):
        pool = ConnectionPool(CountingFactory(), 1)
        held = pool.acquire()
        got = []
        waiter = start_daemon(lambda: got.append(pool.acquire(timeout=5)))
        time.sleep(0.05)
        self.assertEqual(got, [], "acquire returned although the pool was exhausted")
        pool.release(held)
        waiter.join(5)
        self.assertEqual(len(got), 1)
        self.assertIs(got[0], held)

    def test_acquire_without_timeout_blocks_until_release(self):
        pool = ConnectionPool(CountingFactory(), 1)
        held = pool.acquire()
        got = []
        waiter = start_daemon(lambda: got.append(pool.acquire()))
        waiter.join(0.1)
        self.assertTrue(waiter.is_alive())
        pool.release(held)
        waiter.join(5)
        self.assertFalse(waiter.is_alive())
        self.assertIs(got[0], held)

    def test_timeout_does_not_leak_a_slot(self):
        factory = CountingFactory()
        pool = ConnectionPool(factory, 1)
        held = pool.acquire()
        for _ in range(3):
            with self.assertRaises(TimeoutError):
                pool.acquire(timeout=0.01)
        pool.release(held)
        self.assertIs(pool.acquire(timeout=0), held)
        self.assertEqual(factory.calls, 1)


class TestOwnership(unittest.TestCase):
    def test_release_of_foreign_objects_rejected(self):
        pool = ConnectionPool(CountingFactory(), 2)
        other = ConnectionPool(CountingFactory(), 2)
        mine = pool.acquire()
        theirs = other.acquire()
        for foreign in (Conn(99), theirs, object(), None):
            with self.assertRaises(ValueError, msg=repr(foreign)):
                pool.release(foreign)
        pool.release(mine)
        self.assertIs(pool.acquire(timeout=0), mine)

    def test_equal_but_different_object_rejected(self):
        pool = ConnectionPool(CountingFactory(), 1)
        conn = pool.acquire()
        lookalike = Conn(conn.n)
        self.assertEqual(lookalike, conn)
        with self.assertRaises(ValueError):
            pool.release(lookalike)
        pool.release(conn)

    def test_double_release_rejected_and_pool_not_corrupted(self):
        factory = CountingFactory()
        pool = ConnectionPool(factory, 2)
        a = pool.acquire()
        pool.release(a)
        with self.assertRaises(ValueError):
            pool.release(a)
        first = pool.acquire(timeout=0)
        second = pool.acquire(timeout=0)
        self.assertIsNot(first, second, "a double release put the same connection in the pool twice")


class TestConcurrency(unittest.TestCase):
    def test_stress_never_exceeds_max_size(self):
        factory = CountingFactory()
        pool = ConnectionPool(factory, 3)
        state_lock = threading.Lock()
        holders = {}
        peak = [0]
        errors = []

        def worker():
            try:
                for _ in range(150):
                    conn = pool.acquire(timeout=5)
                    with state_lock:
                        if id(conn) in holders:
                            errors.append("connection handed to two threads")
                        holders[id(conn)] = conn
                        peak[0] = max(peak[0], len(holders))
                    with state_lock:
                        del holders[id(conn)]
                    pool.release(conn)
            except Exception as exc:
                errors.append(repr(exc))

        threads = [start_daemon(worker) for _ in range(8)]
        for t in threads:
            t.join(10)
        self.assertFalse(any(t.is_alive() for t in threads), "workers deadlocked")
        self.assertEqual(errors, [])
        self.assertLessEqual(factory.calls, 3)
        self.assertLessEqual(peak[0], 3)

    def test_every_waiter_is_served(self):
        pool = ConnectionPool(CountingFactory(), 2)
        held = [pool.acquire(), pool.acquire()]
        got = []
        got_lock = threading.Lock()

        def waiter():
            conn = pool.acquire(timeout=5)
            with got_lock:
                got.append(conn)

        waiters = [start_daemon(waiter) for _ in range(2)]
        time.sleep(0.05)
        for conn in held:
            pool.release(conn)
        for t in waiters:
            t.join(5)
        self.assertEqual(len(got), 2)
        self.assertEqual({id(c) for c in got}, {id(c) for c in held})


if __name__ == "__main__":
    unittest.main()
