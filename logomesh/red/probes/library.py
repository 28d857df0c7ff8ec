"""Probe functions. Stdlib only; runs INSIDE the sandbox (as ``_lm_probes.py``), never on the host.

Every ``probe_<name>(args, seed, emit)`` measures one thing about the
artifact (``solution``) and returns a JSON-able dict; deciding whether that
is a finding is the host's job (``logomesh/red/attacks/``). Values that JSON
cannot carry (NaN, huge ints, Decimals, clocks, factories) arrive tagged as
``{"$": kind, ...}`` and are decoded here.
"""

from __future__ import annotations

import contextlib
import gc
import os
import random
import sys
import tempfile
import threading
import time
from decimal import Decimal
from typing import Any

import solution  # type: ignore[import-not-found]

Emit = Any


# -- values and targets ----------------------------------------------------------------------------
def decode(value: Any) -> Any:
    if isinstance(value, list):
        return [decode(v) for v in value]
    if not isinstance(value, dict):
        return value
    kind = value.get("$")
    if kind is None:
        return {k: decode(v) for k, v in value.items()}
    if kind in ("nan", "inf", "-inf"):
        return float(kind)
    if kind == "pow":
        return int(value["b"]) ** int(value["e"]) * int(value.get("sign", 1))
    if kind == "decimal":
        return Decimal(value["v"])
    if kind == "bytes":
        return str(value["v"]).encode("latin-1")
    if kind == "tuple":
        return tuple(decode(v) for v in value["v"])
    if kind == "repeat":
        return str(value.get("prefix", "")) + str(value["v"]) * int(value["n"]) + str(value.get("suffix", ""))
    if kind == "clock":
        now = float(value.get("v", 0.0))
        return lambda: now
    if kind == "factory":
        return lambda: object()
    if kind == "object":
        return object()
    raise ValueError(f"unknown tagged value {kind!r}")


def target(args: dict[str, Any]) -> Any:
    """The callable named by ``args['target']``: ``func``, ``Class`` or ``Class.method`` on a fresh instance."""
    name = str(args["target"])
    head, _, method = name.partition(".")
    obj = getattr(solution, head)
    if not method or method == "__init__":
        return obj
    instance = obj(*decode(args.get("ctor", [])), **decode(args.get("ctor_kw", {})))
    for step_name, step_args in args.get("setup", []):
        getattr(instance, step_name)(*decode(step_args))
    return getattr(instance, method)


# -- input probes ----------------------------------------------------------------------------------
def probe_call(args: dict[str, Any], seed: int, emit: Emit) -> dict[str, Any]:
    fn = target(args)
    result = fn(*decode(args.get("args", [])), **decode(args.get("kwargs", {})))
    return {"type": type(result).__name__, "repr": repr(result)[:200]}


class CpuCap(Exception):
    """Raised by the SIGPROF handler when one call has used its CPU allowance."""


def _on_cap(signum: int, frame: Any) -> None:
    raise CpuCap()


def probe_timing(args: dict[str, Any], seed: int, emit: Emit) -> dict[str, Any]:
    """CPU time of one call per input size; stops at the first call over ``cap_s``.

    A profiling timer interrupts a call at the cap (the regex engine and the
    interpreter both check for signals); C code that never checks is killed by
    the fork server's wall clock instead.
    """
    import signal

    signal.signal(signal.SIGPROF, _on_cap)
    fn = target(args)
    template = args["input"]
    cap = float(args.get("cap_s", 1.0))
    points = []
    for n in args["sizes"]:
        if template["kind"] == "int":
            value: Any = int(n)
        else:
            value = str(template.get("prefix", "")) + str(template["pump"]) * int(n) + str(template.get("suffix", ""))
        started = time.process_time()
        error = None
        signal.setitimer(signal.ITIMER_PROF, cap * 1.1)
        try:
            fn(value)
        except CpuCap:
            error = "cap"
        except Exception as exc:
            error = type(exc).__name__
        finally:
            signal.setitimer(signal.ITIMER_PROF, 0)
        spent = time.process_time() - started
        point = {"n": n, "t": round(spent, 6), "exc": error}
        points.append(point)
        emit(point)
        if spent > cap or error == "cap":
            return {"points": points, "capped": True}
    return {"points": points, "capped": False}


def probe_sqli(args: dict[str, Any], seed: int, emit: Emit) -> dict[str, Any]:
    """Build a query with the artifact, then run it against a canary database."""
    import sqlite3

    fn = getattr(solution, str(args["target"]))
    built = fn(*decode(args["args"]))
    sql, params = built[0], tuple(built[1])
    db = sqlite3.connect(":memory:")
    db.execute("CREATE TABLE items (id INTEGER, name TEXT, note TEXT)")
    db.executemany("INSERT INTO items VALUES (?, ?, ?)", [(1, "alice", "n1"), (2, "bob", "n2"), (3, "carol", "n3")])
    db.execute("CREATE TABLE vault (token TEXT)")
    db.execute("INSERT INTO vault VALUES ('LMVAULT-7f3a')")
    out: dict[str, Any] = {"sql": str(sql)[:300], "params": len(params)}
    try:
        rows = db.execute(sql, params).fetchmany(50)
        out["rows"] = len(rows)
        out["vault"] = any("LMVAULT-7f3a" in repr(r) for r in rows)
    except sqlite3.Error as exc:
        out["sql_error"] = f"{type(exc).__name__}: {exc}"[:200]
    try:
        out["vault_intact"] = db.execute("SELECT count(*) FROM vault").fetchone()[0] == 1
    except sqlite3.Error:
        out["vault_intact"] = False
    return out


def probe_traversal(args: dict[str, Any], seed: int, emit: Emit) -> dict[str, Any]:
    """Call ``safe_join(base, payload)`` with a secret outside ``base`` and symlinks that leave it."""
    fn = getattr(solution, str(args["target"]))
    root = tempfile.mkdtemp(dir=os.getcwd())
    base = os.path.join(root, "base")
    outside = os.path.join(root, "outside")
    os.makedirs(os.path.join(base, "docs"))
    os.makedirs(outside)
    with open(os.path.join(base, "docs", "readme.txt"), "w") as handle:
        handle.write("ok")
    secret = os.path.join(outside, "secret.txt")
    with open(secret, "w") as handle:
        handle.write("LMSECRET")
    sibling = base + "_evil"  # shares base's prefix: defeats a startswith() check
    os.makedirs(sibling)
    with open(os.path.join(sibling, "secret.txt"), "w") as handle:
        handle.write("LMSECRET")
    os.symlink(outside, os.path.join(base, "link"))
    os.symlink(secret, os.path.join(base, "docs", "shortcut.txt"))
    payload = str(args["payload"]).replace("{outside}", outside).replace("{secret}", secret)
    if args.get("nul"):
        payload += "\x00"
    result = fn(base, payload)
    real = os.path.realpath(str(result))
    real_base = os.path.realpath(base)
    inside = real == real_base or real.startswith(real_base + os.sep)
    leaked = real in (os.path.realpath(secret), os.path.realpath(os.path.join(sibling, "secret.txt")))
    return {"returned": str(result)[-120:], "inside": inside, "secret": leaked}


def probe_eval(args: dict[str, Any], seed: int, emit: Emit) -> dict[str, Any]:
    """Feed an expression that only code evaluation would honour; look for its side effect.

    The side effect is checked even when the call raises afterwards: the code ran.
    """
    fn = getattr(solution, str(args["target"]))
    canary = os.path.join(os.getcwd(), f"lm_canary_{seed}")
    payload = str(args["payload"]).replace("{canary}", canary)
    try:
        result = fn(payload)
    except Exception as exc:
        if os.path.exists(canary):
            return {"type": "", "repr": "", "canary": True, "exc": type(exc).__name__}
        raise
    return {"type": type(result).__name__, "repr": repr(result)[:120], "canary": os.path.exists(canary)}


# -- races -----------------------------------------------------------------------------------------
def _perturber(rng: random.Random, chance: float) -> Any:
    """A trace function that, inside the artifact's own frames only, yields the GIL at random opcodes."""

    def local(frame: Any, event: str, arg: Any) -> Any:
        if event == "opcode" and rng.random() < chance:
            time.sleep(0.0001)
        return local

    def global_trace(frame: Any, event: str, arg: Any) -> Any:
        if frame.f_code.co_filename.endswith("solution.py"):
            frame.f_trace_opcodes = True
            frame.f_trace_lines = False
            return local
        return None

    return global_trace


def _run_threads(count: int, seed: int, chance: float, work: Any) -> list[str]:
    """Run ``work(index, rng)`` on ``count`` threads under seeded perturbation; return their escapes."""
    errors: list[str] = []
    barrier = threading.Barrier(count)

    def body(index: int) -> None:
        rng = random.Random(seed * 1000 + index)
        barrier.wait()
        sys.settrace(_perturber(rng, chance))
        try:
            work(index, rng)
        except Exception as exc:
            errors.append(f"{type(exc).__name__}: {exc}"[:120])
        finally:
            sys.settrace(None)

    threading.stack_size(256 * 1024)  # the trial's address-space limit must fit every stack
    threads = [threading.Thread(target=body, args=(i,)) for i in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(20.0)
    if any(t.is_alive() for t in threads):
        errors.append("deadlock: a worker thread never finished")
    return errors


def _race_rate_limiter(args: dict[str, Any], seed: int) -> dict[str, Any]:
    limit = int(args.get("limit", 5))
    calls = int(args.get("calls", 4))
    threads = int(args.get("threads", 8))
    limiter = solution.RateLimiter(limit, 1000.0, clock=lambda: 5.0)
    granted: list[bool] = []

    def work(index: int, rng: random.Random) -> None:
        for _ in range(calls):
            granted.append(bool(limiter.allow("k")))

    errors = _run_threads(threads, seed, float(args.get("chance", 0.05)), work)
    total = sum(granted)
    expected = min(limit, threads * calls)
    violations = list(errors)
    if total != expected:
        violations.append(f"{total} grants for one key at one clock reading; the limit is {expected}")
    return {"violations": violations}


def _race_lru_cache(args: dict[str, Any], seed: int) -> dict[str, Any]:
    capacity = int(args.get("capacity", 3))
    ops = int(args.get("ops", 60))
    cache = solution.LRUCache(capacity)
    violations: list[str] = []

    def work(index: int, rng: random.Random) -> None:
        for i in range(ops):
            key = rng.randrange(capacity + 2)
            if rng.random() < 0.5:
                cache.put(key, (key, index, i))
            else:
                got = cache.get(key)
                if got is not None and (not isinstance(got, tuple) or got[0] != key):
                    violations.append(f"get({key}) returned {got!r}, a value stored under another key")

    violations += _run_threads(int(args.get("threads", 6)), seed, float(args.get("chance", 0.05)), work)
    size = len(cache)
    if size > capacity:
        violations.append(f"len(cache) is {size} after the threads finished; capacity is {capacity}")
    return {"violations": violations}


def _race_bank_ledger(args: dict[str, Any], seed: int) -> dict[str, Any]:
    bank = solution.Bank()
    names = ["a", "b", "c", "d"]
    for name in names:
        bank.open_account(name, Decimal(100))
    violations: list[str] = []

    def work(index: int, rng: random.Random) -> None:
        for _ in range(int(args.get("ops", 40))):
            src, dst = rng.sample(names, 2)
            with contextlib.suppress(ValueError):  # an overdraft refused cleanly is correct
                bank.transfer(src, dst, Decimal(rng.randint(1, 30)))

    violations += _run_threads(int(args.get("threads", 6)), seed, float(args.get("chance", 0.05)), work)
    balances = [bank.balance(n) for n in names]
    if sum(balances) != Decimal(400):
        violations.append(f"money not conserved: balances {[str(b) for b in balances]} sum to {sum(balances)}, not 400")
    if any(b < 0 for b in balances):
        violations.append(f"overdraft under concurrency: balances {[str(b) for b in balances]}")
    return {"violations": violations}


def _race_connection_pool(args: dict[str, Any], seed: int) -> dict[str, Any]:
    created: list[object] = []
    held: set[int] = set()
    guard = threading.Lock()
    violations: list[str] = []

    def factory() -> object:
        conn = object()
        created.append(conn)
        return conn

    max_size = int(args.get("max_size", 2))
    pool = solution.ConnectionPool(factory, max_size)

    def work(index: int, rng: random.Random) -> None:
        for _ in range(int(args.get("ops", 15))):
            try:
                conn = pool.acquire(timeout=5.0)
            except TimeoutError:
                continue
            with guard:
                if id(conn) in held:
                    violations.append("one connection handed to two threads at once")
                held.add(id(conn))
            time.sleep(0)
            with guard:
                held.discard(id(conn))
            pool.release(conn)

    violations += _run_threads(int(args.get("threads", 6)), seed, float(args.get("chance", 0.05)), work)
    if len(created) > max_size:
        violations.append(f"{len(created)} connections created; max_size is {max_size}")
    return {"violations": violations}


RACES = {
    "rate-limiter": _race_rate_limiter,
    "lru-cache": _race_lru_cache,
    "bank-ledger": _race_bank_ledger,
    "connection-pool": _race_connection_pool,
}


def probe_race(args: dict[str, Any], seed: int, emit: Emit) -> dict[str, Any]:
    sys.setswitchinterval(1e-5)
    return RACES[str(args["scenario"])](args, seed)


# -- resource growth -------------------------------------------------------------------------------
def _grow_rate_limiter(size: int) -> Any:
    """Distinct keys arrive steadily; about 100 are live at any time, the rest have expired."""
    now = [0.0]
    limiter = solution.RateLimiter(2, 1.0, clock=lambda: now[0])
    for i in range(size):
        now[0] += 0.01
        limiter.allow(f"key-{i}")
    return limiter


def _grow_lru_cache(size: int) -> Any:
    cache = solution.LRUCache(4)
    for i in range(4):
        cache.put(i, i)
    for i in range(size):
        cache.get(i % 4)
        cache.put(i % 4, i)
    return cache


def _grow_connection_pool(size: int) -> Any:
    pool = solution.ConnectionPool(object, 2)
    for _ in range(size):
        pool.release(pool.acquire(timeout=1.0))
    return pool


def _grow_merkle_root(size: int) -> Any:
    for i in range(size):
        solution.merkle_root([b"leaf-%d" % i, b"other-%d" % i])
    return None


GROWTH = {"rate-limiter": _grow_rate_limiter, "lru-cache": _grow_lru_cache,
          "connection-pool": _grow_connection_pool, "merkle-root": _grow_merkle_root}


def probe_growth(args: dict[str, Any], seed: int, emit: Emit) -> dict[str, Any]:
    """Memory an instance retains after ``size`` operations whose state the contract lets it drop."""
    import tracemalloc

    grow = GROWTH[str(args["scenario"])]
    points = []
    for size in args["sizes"]:
        gc.collect()
        tracemalloc.start()
        kept = grow(int(size))
        gc.collect()
        current, _ = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        del kept
        points.append({"n": size, "bytes": current})
        emit(points[-1])
    return {"points": points}


# -- stateful models -------------------------------------------------------------------------------
def _model_lru_cache(rng: random.Random, steps: int) -> list[str]:
    """Random put/get against an OrderedDict model; returns the call sequence up to the first divergence."""
    from collections import OrderedDict

    capacity = rng.randint(1, 3)
    cache = solution.LRUCache(capacity)
    model: OrderedDict[int, int] = OrderedDict()
    calls = [f"c = LRUCache({capacity})"]
    for step in range(steps):
        key = rng.randrange(capacity + 2)
        if rng.random() < 0.5:
            calls.append(f"c.put({key}, {step})")
            cache.put(key, step)
            model[key] = step
            model.move_to_end(key)
            if len(model) > capacity:
                model.popitem(last=False)
        else:
            calls.append(f"c.get({key})")
            got = cache.get(key)
            want = model.get(key)
            if key in model:
                model.move_to_end(key)
            if got != want:
                return [*calls, f"# returned {got!r}; an LRU cache returns {want!r}"]
    return []


def _model_rate_limiter(rng: random.Random, steps: int) -> list[str]:
    """Integer clock readings against an exact sliding-window model."""
    limit = rng.randint(1, 3)
    window = rng.randint(2, 4)
    now = [0]
    limiter = solution.RateLimiter(limit, float(window), clock=lambda: float(now[0]))
    grants: dict[str, list[int]] = {}
    calls = [f"t = 0; r = RateLimiter({limit}, {float(window)}, clock=lambda: t)"]
    for _ in range(steps):
        if rng.random() < 0.4:
            now[0] += rng.randint(1, 2)
            calls.append(f"t = {now[0]}")
        key = rng.choice("ab")
        calls.append(f"r.allow({key!r})")
        got = limiter.allow(key)
        live = [g for g in grants.get(key, []) if g > now[0] - window]
        want = len(live) < limit
        if want:
            live.append(now[0])
        grants[key] = live
        if bool(got) != want:
            return [*calls, f"# returned {got!r}; the sliding window allows {want!r}"]
    return []


def _model_bank_ledger(rng: random.Random, steps: int) -> list[str]:
    """Deposits, withdrawals and transfers against a dict of Decimals; refusals must change nothing."""
    bank = solution.Bank()
    model = {"a": Decimal(50), "b": Decimal(50)}
    calls = []
    for name, amount in model.items():
        bank.open_account(name, amount)
        calls.append(f"bank.open_account({name!r}, Decimal('{amount}'))")
    for _ in range(steps):
        op = rng.choice(["deposit", "withdraw", "transfer"])
        amount = Decimal(rng.randint(1, 40)) / (10 if rng.random() < 0.3 else 1)
        src, dst = rng.sample(["a", "b"], 2)
        args = (src, dst, amount) if op == "transfer" else (src, amount)
        calls.append(f"bank.{op}({', '.join(repr(a) for a in args[:-1])}, Decimal('{amount}'))")
        refused = False
        try:
            getattr(bank, op)(*args)
        except ValueError:
            refused = True
        allowed = op == "deposit" or model[src] >= amount
        if refused and allowed:
            return [*calls, "# refused a valid operation"]
        if not refused and not allowed:
            return [*calls, "# allowed an overdraft"]
        if allowed:
            if op == "deposit":
                model[src] += amount
            else:
                model[src] -= amount
                if op == "transfer":
                    model[dst] += amount
        for name in model:
            if bank.balance(name) != model[name]:
                return [*calls, f"# balance({name!r}) is {bank.balance(name)}; the ledger says {model[name]}"]
    return []


MODELS = {"lru-cache": _model_lru_cache, "rate-limiter": _model_rate_limiter, "bank-ledger": _model_bank_ledger}


def probe_model(args: dict[str, Any], seed: int, emit: Emit) -> dict[str, Any]:
    """The first divergence from the model; ``fixed_seed`` replays a known sequence exactly."""
    seed = int(args.get("fixed_seed", seed))
    rng = random.Random(seed)
    for _ in range(int(args.get("sequences", 20))):
        calls = MODELS[str(args["scenario"])](rng, int(args.get("steps", 30)))
        if calls:
            return {"divergence": calls[-40:], "seed": seed}
    return {"divergence": [], "seed": seed}
