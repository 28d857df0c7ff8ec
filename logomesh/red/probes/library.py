"""Probe functions. Stdlib only; runs INSIDE the sandbox, in the judge's driver process, never on the host.

Every ``probe_<name>(args, seed, emit)`` measures one thing about the
artifact (``solution``) and returns a JSON-able dict; deciding whether that
is a finding is the host's job (``logomesh/red/attacks/``). Values that JSON
cannot carry (NaN, huge ints, Decimals, clocks, factories) arrive tagged as
``{"$": kind, ...}`` and are decoded here.

Each probe is the body of a driver module (``red/driven.py``), where
``import solution`` gives the answerer's proxies: the code runs in a process
of its own. What only a task knows (its race scenario, growth driver,
stateful model) is the task's own ``red.py``, loaded beside this module as
``TASK`` (``docs/tasks.md``, "Red-agent scenarios"); the probes call into it.
"""

from __future__ import annotations

import contextlib
import os
import random
import tempfile
import threading
import time
from decimal import Decimal
from types import ModuleType
from typing import Any

import solution  # type: ignore[import-not-found]  # the answerer's proxies (driver.SolutionFinder)
from observe import stat_fields  # type: ignore[import-not-found]  # the driver's observe.py

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


# -- the code's process, read from the kernel -------------------------------------------------------
# The growth and timing probes run as drivers (``red/driven.py``), in the judge's process, and read what the
# code's processes use from ``/proc``: nothing the code does to its own interpreter (stop tracemalloc, rewrite
# time.process_time, block a signal) moves these readings.
CODE: Any = None  # ``observe.CODE`` (the code's process: its pid, ``stop()``), set when the probe runs as a driver
CAP_POLL_S = 0.005  # how often the timing probe's watchdog reads the code's CPU time (its caps are 0.25 s)
TRIAL_POLL_S = 0.05  # how often a trial's watchdog does (its limits are seconds; each read lists /proc)
IDLE_S = 0.5  # a code neither running nor waiting for a CPU this long is waiting of its own accord, not working
# What the answerer spends to keep one object of the code's alive for the judge (``CODE.held()``): its entries in
# the wire's two tables, its id as an int, and a small object (measured: 142 B per ``object()`` that
# ConnectionPool(object, 2) made afresh on each of 8,000 acquires). Not the code's retained memory.
HELD_BYTES = 192
_TICK = os.sysconf("SC_CLK_TCK")


def _code() -> Any:
    """The code's process; only a probe that runs as a driver, beside the answerer, has one."""
    if CODE is None or CODE.pid is None:
        raise RuntimeError("this probe measures the code from outside and must run as a driver")
    return CODE


def _proc_text(path: str) -> str | None:
    """A ``/proc`` file's text; ``""`` when the process is gone, None when the kernel refuses to show it."""
    try:
        with open(path, encoding="ascii") as handle:
            return handle.read()
    except (FileNotFoundError, ProcessLookupError):
        return ""
    except OSError:
        return None


def _kib(text: str, *fields: str) -> int:
    """The sum of the ``Field:  n kB`` lines named ``fields`` in a ``/proc`` status-like text, in bytes."""
    total = 0
    for line in text.splitlines():
        name, _, rest = line.partition(":")
        if name in fields:
            total += int(rest.split()[0]) * 1024
    return total


def memory_of(pid: int) -> int | None:
    """Memory that process ``pid`` made for itself, in bytes, read from the kernel; None if it may not be read.

    ``Pss_Anon + Pss_Shmem`` of ``/proc/<pid>/smaps_rollup``: anonymous pages (the Python heap: malloc's brk
    and mmap arenas, private anonymous ``mmap``) and shared-memory pages (``mmap.mmap(-1, n)`` is a shared
    anonymous mapping, which ``Anonymous`` leaves out), each shared page divided among the processes that
    map it, so a sum over the code's processes counts a page once even after a fork. File-backed pages
    (libraries, the interpreter) are left out: touching one is not keeping state. ``/proc/<pid>/status``
    (``RssAnon + RssShmem``) on a kernel without ``smaps_rollup``'s ``Pss_*`` lines."""
    rollup = _proc_text(f"/proc/{pid}/smaps_rollup")
    if rollup is None:
        return None
    if "Pss_Anon:" in rollup:
        return _kib(rollup, "Pss_Anon", "Pss_Shmem")
    status = _proc_text(f"/proc/{pid}/status")
    return None if status is None else _kib(status, "RssAnon", "RssShmem")


def cpu_of(pid: int) -> float:
    """CPU seconds process ``pid`` has used, read from the kernel: user and system, all its threads, and its
    children it has waited for (``/proc/<pid>/stat`` utime, stime, cutime, cstime); 0 when it is gone."""
    fields = stat_fields(pid) or []
    with contextlib.suppress(ValueError):
        return sum(int(f) for f in fields[11:15]) / _TICK
    return 0.0


def code_memory(code: Any) -> int | None:
    """Memory the code holds: that of all its processes (``memory_of``) and the files on the box's in-memory
    filesystems (``tmpfs_bytes``); None if a process's memory may not be read."""
    readings = [memory_of(pid) for pid in code.pids()]
    if any(r is None for r in readings):
        return None
    return sum(r for r in readings if r is not None) + tmpfs_bytes()


def tmpfs_bytes() -> int:
    """Bytes in use on the box's writable tmpfs mounts (the work folder, ``/tmp``, ``/dev/shm``), read with
    ``statvfs``: a journal the code appends to a file there is memory that no process's pages show. The judge
    writes nothing there while a probe runs, so a difference between two readings is the code's."""
    total, seen = 0, set()
    for line in (_proc_text("/proc/self/mounts") or "").splitlines():
        fields = line.split()
        if len(fields) < 4 or fields[2] != "tmpfs" or "rw" not in fields[3].split(","):
            continue
        mount = fields[1].replace("\\040", " ")
        try:
            device, usage = os.stat(mount).st_dev, os.statvfs(mount)
        except OSError:
            continue
        if device not in seen:  # one filesystem mounted twice counts once
            seen.add(device)
            total += (usage.f_blocks - usage.f_bfree) * usage.f_frsize
    return total


def code_cpu(code: Any) -> float:
    """CPU seconds of all the code's processes (``cpu_of``)."""
    return sum(cpu_of(pid) for pid in code.pids())


def runnable_ns(code: Any) -> dict[str, int]:
    """Nanoseconds each thread of the code's processes has been runnable: running, or waiting on a run queue
    for a CPU (the first two fields of ``/proc/<pid>/task/<tid>/schedstat``). What is left of the wall clock,
    the thread chose to wait (a sleep, a lock, a read)."""
    times = {}
    for pid in code.pids():
        try:
            tids = os.listdir(f"/proc/{pid}/task")
        except OSError:
            continue
        for tid in tids:
            fields = (_proc_text(f"/proc/{pid}/task/{tid}/schedstat") or "").split()[:2]
            if len(fields) == 2 and all(f.isdigit() for f in fields):
                times[f"{pid}/{tid}"] = int(fields[0]) + int(fields[1])
    return times


def throttled_ns() -> int:
    """Nanoseconds the box's CPU quota has held the box back (cgroup ``cpu.stat``: v1 ``throttled_time``, v2
    ``throttled_usec``); 0 where there is no quota (bubblewrap)."""
    for path, key, scale in (("/sys/fs/cgroup/cpu/cpu.stat", "throttled_time", 1),
                             ("/sys/fs/cgroup/cpu.stat", "throttled_usec", 1000)):
        for line in (_proc_text(path) or "").splitlines():
            name, _, value = line.partition(" ")
            if name == key and value.strip().isdigit():
                return int(value) * scale
    return 0


def _wanting(runnable: dict[str, int], throttled: int) -> int:
    """Nanoseconds the code's threads have been runnable or throttled, all told: it grows while the code runs or
    waits for a CPU, on an idle machine and a loaded one alike, and stands still while it sleeps."""
    return sum(runnable.values()) + throttled


class Watchdog:
    """Kills the code's processes (``CODE.stop()``) once a call has used more than ``cap`` CPU seconds, or, given
    ``wait_s``, once that much wall time has passed and the code neither ran nor waited for a CPU in the last
    ``IDLE_S`` (a hang: a deadlock, a sleep; a loaded machine delays a working thread, it does not make it look
    asleep), or, given ``backstop_s``, at that wall time whatever it does.

    A thread of the judge's process reads the code's CPU time every ``poll_s``; the call in flight then
    ends as ``Lost`` (the wire's). ``reason`` says which limit fired: ``"cpu"``; ``"timeout"``, a hang of the
    code's own making; or ``"starved"``, the backstop reached while one of the code's threads was runnable
    (``runnable_ns``, or held back by the box's quota) for at least half the time: it wanted the CPU and, short
    of its cap, mostly did not get it. Only that is the machine's doing: code that works in slow trickles, to
    stay clear of the idle rule, reaches the backstop having chosen to wait."""

    def __init__(self, code: Any, cap: float, wait_s: float | None = None, backstop_s: float | None = None,
                 poll_s: float = CAP_POLL_S) -> None:
        self.code = code
        self.poll_s = poll_s
        self.cap = cap
        self.wait_s, self.backstop_s = wait_s, backstop_s
        self.started = code_cpu(code)
        self.watches_wall = wait_s is not None or backstop_s is not None
        self.runnable = (runnable_ns(code), throttled_ns()) if self.watches_wall else ({}, 0)
        self.clock = time.monotonic()
        self.progress = (self.clock, _wanting(*self.runnable))  # when the code last wanted the CPU, and how much
        self.spent = 0.0
        self.fired = False
        self.reason = ""
        self.done = threading.Event()
        self.thread = threading.Thread(target=self._watch, daemon=True)
        self.thread.start()

    def _over(self) -> str:
        now, cpu = time.monotonic(), code_cpu(self.code)
        self.spent = cpu - self.started
        if self.spent >= self.cap:  # the kernel counts CPU in ticks: a trial that used exactly its cap is done
            return "cpu"
        if not self.watches_wall:
            return ""
        runnable, throttled = runnable_ns(self.code), throttled_ns()  # read once a poll
        if (wanting := _wanting(runnable, throttled)) != self.progress[1]:
            self.progress = (now, wanting)
        if self.backstop_s is not None and now - self.clock > self.backstop_s:
            return "starved" if self._wanted_cpu(now - self.clock, runnable, throttled) else "timeout"
        if self.wait_s is not None and now - self.clock > self.wait_s and now - self.progress[0] > IDLE_S:
            return "timeout"
        return ""

    def _wanted_cpu(self, wall: float, runnable: dict[str, int], throttled: int) -> bool:
        """Whether a thread of the code was runnable, or throttled, at least half of ``wall`` seconds."""
        before, throttled_before = self.runnable
        busiest = max((ns - before.get(tid, 0) for tid, ns in runnable.items()), default=0)
        return busiest + throttled - throttled_before >= wall * 1e9 / 2

    def _watch(self) -> None:
        while not self.done.wait(self.poll_s):
            reason = self._over()
            if reason:
                self.fired, self.reason = True, reason
                self.code.stop()
                return

    def finish(self) -> float:
        """Stop watching; the CPU seconds the call used (at the kill, for a call it killed)."""
        self.done.set()
        self.thread.join()
        if not self.fired:
            self.spent = code_cpu(self.code) - self.started
        return round(self.spent, 6)


def fresh_after(probe: Any) -> Any:
    """``probe``, ending the code's processes once it returns or raises: the next trial starts from a fresh
    import. What one trial left behind (a module-level cache filled with the same inputs, freed heap the next
    ``grow`` would reuse) cannot hide the next one's."""

    def trial(args: dict[str, Any], seed: int, emit: Emit) -> dict[str, Any]:
        try:
            result: dict[str, Any] = probe(args, seed, emit)
        finally:
            _code().stop()
        return result

    trial.__doc__ = probe.__doc__
    return trial


@fresh_after
def probe_timing(args: dict[str, Any], seed: int, emit: Emit) -> dict[str, Any]:
    """CPU time of one call per input size, read from the kernel; stops at the first call over ``cap_s``.

    The code answers in its own process; a watchdog here kills it once a call has used the cap (a
    backtracking regex, C code that never checks for signals alike), and the call is recorded as capped."""
    code = _code()
    fn = target(args)
    template = args["input"]
    cap = float(args.get("cap_s", 1.0))
    points = []
    for n in args["sizes"]:
        if template["kind"] == "int":
            value: Any = int(n)
        else:
            value = str(template.get("prefix", "")) + str(template["pump"]) * int(n) + str(template.get("suffix", ""))
        error = None
        watchdog = Watchdog(code, cap)
        try:
            fn(value)
        except BaseException as exc:  # the wire's Lost, when the watchdog killed the code mid-call
            if not watchdog.fired and not isinstance(exc, Exception):
                watchdog.finish()
                raise
            error = "cap" if watchdog.fired else type(exc).__name__
        spent = watchdog.finish()
        point = {"n": n, "t": spent, "exc": error}
        points.append(point)
        emit(point)
        if spent > cap or watchdog.fired:
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
LIFTED = "lifted the race probe's schedule (sys.settrace, or a frame's own tracing, in its own thread)"
BARRIER_S = 10.0  # how long a scenario thread waits for the others to be scheduled


def run_threads(count: int, seed: int, chance: float, work: Any) -> list[str]:
    """Run ``work(index, rng)`` on ``count`` threads of the driver, each calling the code over a connection of
    its own that the answerer serves under seeded perturbation; return their escapes.

    The task's ``race(args, seed, run_threads)`` gets this function as its third argument. Every call and
    answer the scenario records is made here, in the judge's process.
    """
    errors: list[str] = []
    barrier = threading.Barrier(count)
    peer = solution._lm_remote._lm_peer
    if peer.history is None:
        peer.history = []  # every call from here to the scenario's end: the client-side history (probe_race)

    def body(index: int) -> None:
        rng = random.Random(seed * 1000 + index)
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
                errors.append("the code lifted the probe's schedule (sys.settrace, or a frame's own tracing): its "
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


TASK: ModuleType | None = None  # the task's red.py; set by the driver module (``driven.TRIALS``)


def _task() -> ModuleType:
    """The task's red.py, loaded by the driver module where no module table holds it."""
    if TASK is None:
        raise RuntimeError("this probe needs the task's red.py, and none was shipped")
    return TASK


def probe_race(args: dict[str, Any], seed: int, emit: Emit) -> dict[str, Any]:
    """The task's race scenario under perturbation: what it recorded (judged on the host by its
    ``check_race``), or, from a scenario that judges itself, the violations it saw."""
    peer = solution._lm_remote._lm_peer
    try:
        recorded = _task().race(args, seed, run_threads)
    finally:
        history, peer.history = peer.history, None
    if not isinstance(recorded, dict):
        return {"violations": list(recorded)}
    return {"observed": recorded, "history": _calls(history)} if history is not None else {"observed": recorded}


def _calls(history: list[Any]) -> list[Any]:
    """The history the driver's wire kept (``wire._note``), as the host reads it: threads numbered in order of
    their first call, times in ns from the first call, the schedule requests left out; a ``None`` last when the
    wire stopped keeping calls."""
    threads: dict[int, int] = {}
    start = history[0][1] if history and history[0] is not None else 0
    calls: list[Any] = []
    for entry in history:
        if entry is None:
            calls.append(None)
            break
        ident, invoked, completed, sent, answer = entry
        if sent[0] == "special" and sent[2] == "__schedule__":
            continue
        calls.append([threads.setdefault(ident, len(threads)), invoked - start, completed - start, sent, answer])
    return calls


# -- resource growth -------------------------------------------------------------------------------
@fresh_after
def probe_growth(args: dict[str, Any], seed: int, emit: Emit) -> dict[str, Any]:
    """Memory the code's processes retain after ``size`` operations whose state the contract lets it drop.

    Read from the kernel (``code_memory``) before the task's ``grow(size)`` and after it, with what it returned
    still alive; the difference is what those operations left behind. The answerer is never asked to collect
    its garbage (the driver cannot run code there): the growth family's thresholds allow for what a correct
    implementation's heap keeps as slack.

    A fresh answerer starts with free heap (about 0.3-0.6 MB, from its own start-up; how much moves with any
    edit of the wire), which the first operations fill without a page being added. So an unmeasured run of the
    first size comes first, and every run's result stays alive to the end: no reading is served from the
    slack or from an earlier run's freed heap, and code that keeps a fixed ballast per instance reads the
    same at both sizes. Objects the code handed over (a fresh connection per ``acquire``)
    are kept alive by the wire, not by the code: ``HELD_BYTES`` each is not counted."""
    grow = _task().grow
    code = _code()
    points: list[dict[str, int]] = []
    kept = [grow(int(args["sizes"][0]))]  # spends the answerer's free heap before anything is read
    for size in args["sizes"]:
        before, held = code_memory(code), code.held()
        kept.append(grow(int(size)))
        after, held = code_memory(code), code.held() - held
        if before is None or after is None:
            return {"points": points, "tampered": "the code hid its process's memory from the judge (/proc/<pid>/"
                                                  "smaps_rollup unreadable): its retained memory cannot be measured"}
        points.append({"n": size, "bytes": max(0, after - before - HELD_BYTES * held)})
        emit(points[-1])
    return {"points": points}


# -- stateful models -------------------------------------------------------------------------------
def probe_model(args: dict[str, Any], seed: int, emit: Emit) -> dict[str, Any]:
    """``sequences`` call sequences of the task's model scenario: their records (judged on the host by the
    task's ``check_model``), or, from a scenario that judges itself, the first divergence it saw.
    ``fixed_seed`` replays a known batch exactly."""
    seed = int(args.get("fixed_seed", seed))
    rng = random.Random(seed)
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
