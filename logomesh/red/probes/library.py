"""Probe functions. Stdlib only; runs INSIDE the sandbox (as ``_lm_probes.py``), never on the host.

Every ``probe_<name>(args, seed, emit)`` measures one thing about the
artifact (``solution``) and returns a JSON-able dict; deciding whether that
is a finding is the host's job (``logomesh/red/attacks/``). Values that JSON
cannot carry (NaN, huge ints, Decimals, clocks, factories) arrive tagged as
``{"$": kind, ...}`` and are decoded here.

What only a task knows (its race scenario, growth driver, stateful model)
is the task's own ``red.py``, shipped next to this file as ``_lm_task.py``
(``docs/tasks.md``, "Red-agent scenarios"); the probes below call into it.
"""

from __future__ import annotations

import gc
import os
import random
import tempfile
import threading
import time
import tracemalloc
import types
from decimal import Decimal
from types import ModuleType
from typing import Any

# Bound before the artifact is imported, so that what it does to these names cannot blind the probes: a
# submission that reads this file could otherwise stop memory tracing. Each probe checks its measurement was
# still in force when the artifact's code returned, and reports it as a hit if not.
_trace_start, _trace_stop = tracemalloc.start, tracemalloc.stop
_is_tracing, _traced_memory = tracemalloc.is_tracing, tracemalloc.get_traced_memory
_traceback_of = tracemalloc.get_object_traceback
_process_time = time.process_time


class _Random(random.Random):
    """The scenarios' seeded generator: ``random.Random``'s Python methods, copied before the artifact is
    imported, so that rewriting ``random.Random`` cannot steer which inputs and schedules a probe draws."""


for _name, _method in vars(random.Random).items():
    if isinstance(_method, types.FunctionType | classmethod | staticmethod):
        setattr(_Random, _name, _method)

import solution  # type: ignore[import-not-found]  # noqa: E402 - after the bindings above, on purpose

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
    if kind == "none":  # TOML has no null
        return None
    if kind == "escaped":  # a string TOML cannot hold (a lone surrogate), as Python escapes
        return str(value["v"]).encode("ascii").decode("unicode_escape")
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
        started = _process_time()
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
        spent = _process_time() - started
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
    vault = str(args.get("vault", "vault"))  # drawn per battle by the family: letters only
    if not vault.isidentifier():
        raise ValueError(f"the canary table's name {vault!r} is no identifier")
    db.execute(f"CREATE TABLE {vault} (token TEXT)")
    db.execute(f"INSERT INTO {vault} VALUES ('LMVAULT-7f3a')")
    out: dict[str, Any] = {"sql": str(sql)[:300], "params": len(params)}
    try:
        rows = db.execute(sql, params).fetchmany(50)
        out["rows"] = len(rows)
        out["vault"] = any("LMVAULT-7f3a" in repr(r) for r in rows)
    except sqlite3.Error as exc:
        out["sql_error"] = f"{type(exc).__name__}: {exc}"[:200]
    try:
        out["vault_intact"] = db.execute(f"SELECT count(*) FROM {vault}").fetchone()[0] == 1
    except sqlite3.Error:
        out["vault_intact"] = False
    return out


def probe_traversal(args: dict[str, Any], seed: int, emit: Emit) -> dict[str, Any]:
    """Call ``target(base, payload)`` with a secret outside ``base`` and symlinks that leave it."""
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
def _schedule(seed: int, chance: float) -> bool:
    """Ask the answerer to perturb the thread that serves this thread's connection (``wire._schedule``);
    True if the schedule it set before was still in force."""
    return bool(solution._lm_remote._lm_special("__schedule__", seed, chance))


LOOKS: list[str] = []  # what the answerer said the code did to the judge's one instrument, in this trial
LIFTED = "lifted the race probe's schedule (sys.settrace in its own thread)"
BARRIER_S = 10.0  # how long a scenario thread waits for the others to be scheduled


def run_threads(count: int, seed: int, chance: float, work: Any) -> list[str]:
    """Run ``work(index, rng)`` on ``count`` threads of the driver, each calling the code over a connection of
    its own that the answerer serves under seeded perturbation; return their escapes.

    The task's ``race(args, seed, run_threads)`` gets this function as its third argument. Every call and
    answer the scenario records is made here, in the judge's process.
    """
    errors: list[str] = []
    barrier = threading.Barrier(count)

    def body(index: int) -> None:
        rng = _Random(seed * 1000 + index)
        try:
            if chance > 0:  # the benign control runs unperturbed
                _schedule(seed * 1000 + index, chance)
            barrier.wait(BARRIER_S)
            work(index, rng)
        except Exception as exc:
            barrier.abort()  # the others stop waiting for this thread
            errors.append(f"{type(exc).__name__}: {exc}"[:120])
        finally:
            if chance > 0 and not _schedule(0, 0.0):
                errors.append("the code lifted the probe's schedule (sys.settrace in its own thread): its "
                              "thread-safety cannot be measured")
                LOOKS.append(LIFTED)

    threads = [threading.Thread(target=body, args=(i,)) for i in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(20.0)
    if any(t.is_alive() for t in threads):
        errors.append("deadlock: a worker thread never finished")
    return errors


TASK: ModuleType | None = None  # the task's red.py, shipped as ``_lm_task.py``; set by the runtime


def _task() -> ModuleType:
    """The task's red.py, loaded by the runtime where no module table holds it."""
    if TASK is None:
        raise RuntimeError("this probe needs the task's red.py, and none was shipped")
    return TASK


def probe_race(args: dict[str, Any], seed: int, emit: Emit) -> dict[str, Any]:
    """The task's race scenario under perturbation: what it recorded (judged on the host by its
    ``check_race``), or, from a scenario that judges itself, the violations it saw."""
    recorded = _task().race(args, seed, run_threads)
    if isinstance(recorded, dict):
        return {"observed": recorded}
    return {"violations": list(recorded)}


# -- resource growth -------------------------------------------------------------------------------
def probe_growth(args: dict[str, Any], seed: int, emit: Emit) -> dict[str, Any]:
    """Memory an instance retains after ``size`` operations whose state the contract lets it drop."""
    grow = _task().grow
    points: list[dict[str, int]] = []
    for size in args["sizes"]:
        gc.collect()
        _trace_start()
        sentinel = [size]  # traced from here on: stopping, restarting or clearing the traces forgets it
        kept = grow(int(size))
        gc.collect()
        if not _is_tracing() or _traceback_of(sentinel) is None:
            return {"points": points, "tampered": "the code stopped or reset memory tracing (tracemalloc) while "
                                                  "it ran: its retained memory cannot be measured"}
        current, _ = _traced_memory()
        _trace_stop()
        del kept
        points.append({"n": size, "bytes": current})
        emit(points[-1])
    return {"points": points}


# -- stateful models -------------------------------------------------------------------------------
def probe_model(args: dict[str, Any], seed: int, emit: Emit) -> dict[str, Any]:
    """``sequences`` call sequences of the task's model scenario: their records (judged on the host by the
    task's ``check_model``), or, from a scenario that judges itself, the first divergence it saw.
    ``fixed_seed`` replays a known batch exactly."""
    seed = int(args.get("fixed_seed", seed))
    rng = _Random(seed)
    records = []
    for _ in range(int(args.get("sequences", 20))):
        recorded = _task().model(rng, int(args.get("steps", 30)))
        if isinstance(recorded, dict):
            records.append(recorded)
        elif recorded:
            return {"divergence": list(recorded)[-40:], "seed": seed}
    if records:
        return {"observed": records, "seed": seed}
    return {"divergence": [], "seed": seed}
