"""The probe fork server. Stdlib only; runs INSIDE the sandbox, never on the host.

Shipped into the box as ``_lm_runtime.py`` next to ``solution.py``,
``_lm_probes.py``, the task's ``_lm_task.py`` and ``_lm_audit.py`` (the
harness's audit hook), and started by the script ``main.py``. Before the
artifact is imported, ``serve(spec)`` reads those files and removes them and
the script, takes itself out of ``sys.modules``, installs the audit hook and
loads the probes and the task's module into namespaces that no module table
holds: the code under test finds only ``solution.py`` beside it, nothing of
ours by name, and any look at the judge (frames, heap, trace hooks, ctypes)
is reported on stdout as an ``LMAUDIT`` line the moment it happens, and
again in the result. ``serve`` then imports the artifact once and forks one
child per trial: the child lowers its own limits (address space, CPU), runs
one probe function and streams JSON lines (progress, then the final record)
up a pipe; the parent enforces the time limit from outside with SIGKILL (CPU
time for a trial that computes, the wall clock for one that waits). The
parent prints one ``LMPROBE {...}`` line with every trial's record.
"""

from __future__ import annotations

import contextlib
import json
import os
import resource
import select
import signal
import sys
import time
import traceback
import types
from typing import Any

MARK = "LMPROBE "
# Bound when this module loads, before the artifact is imported: a replaced json.dumps or os.write (the
# audit hook reports the replacement too) cannot rewrite a trial's record on its way out.
_dumps, _loads, _write, _read, _select = json.dumps, json.loads, os.write, os.read, select.select
_kill, _wait4, _fork, _pipe, _close, _exit = os.kill, os.wait4, os.fork, os.pipe, os.close, os._exit


def _vm_size() -> int:
    try:
        with open("/proc/self/status", encoding="ascii") as handle:
            for line in handle:
                if line.startswith("VmSize:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 64 * 1024 * 1024


def _child(fd: int, probe: Any, args: dict[str, Any], seed: int, mem: int, cpu_s: int, reasons: Any) -> None:
    def emit(record: dict[str, Any]) -> None:
        _write(fd, (_dumps(record, default=str) + "\n").encode())

    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    os.dup2(devnull, 2)
    try:
        resource.setrlimit(resource.RLIMIT_AS, (_vm_size() + mem, _vm_size() + mem))
        resource.setrlimit(resource.RLIMIT_CPU, (cpu_s, cpu_s + 1))
    except (ValueError, OSError):
        pass
    record: dict[str, Any]
    try:
        result = probe(args, seed, emit)
        record = {"status": "ok", "result": result}
    except MemoryError:
        record = {"status": "memory"}
    except RecursionError as exc:
        record = {"status": "exception", "exc": "RecursionError", "msg": str(exc)[:200]}
    except BaseException as exc:
        frames = traceback.extract_tb(exc.__traceback__)
        where = [f"{f.name}:{f.lineno}" for f in frames if f.filename.endswith("solution.py")]
        record = {"status": "exception", "exc": type(exc).__name__, "msg": str(exc)[:200], "where": where[-3:]}
    record["introspection"] = reasons()
    try:
        emit({"final": record})
    except (OSError, TypeError, ValueError):
        emit({"final": {"status": "exception", "exc": "UnserialisableResult", "msg": ""}})


def _stat_fields(path: str) -> list[str]:
    """The fields after the command name of a ``/proc/.../stat`` file (empty when it is gone)."""
    with contextlib.suppress(OSError), open(path, encoding="ascii") as handle:
        return handle.read().rpartition(")")[2].split()
    return []


def _cpu_s(pid: int) -> float:
    """CPU seconds the child has used so far (user and system, all its threads)."""
    fields = _stat_fields(f"/proc/{pid}/stat")
    with contextlib.suppress(IndexError, ValueError):
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return 0.0


def _computing(pid: int) -> bool:
    """Some thread of the child is running or waiting for a CPU (not blocked on a lock, a sleep or I/O)."""
    with contextlib.suppress(OSError):
        return any(_stat_fields(f"/proc/{pid}/task/{tid}/stat")[:1] == ["R"] for tid in os.listdir(f"/proc/{pid}/task"))
    return False


def _collect(pid: int, fd: int, timeout_s: float, backstop: float) -> dict[str, Any]:
    """The trial's records; its time limit is CPU time, so the machine's load cannot end a trial early.

    At ``timeout_s`` of wall clock a trial whose threads all wait (a hang) is killed; one still computing
    runs on until it has used ``timeout_s`` of CPU (the CPU rlimit stops it a second later in any case) or
    the wall clock reaches ``backstop`` times the timeout. On an idle machine both limits coincide."""
    started = time.monotonic()
    deadline = started + timeout_s
    buffer = b""
    timed_out = False
    while True:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            now = time.monotonic()
            if now - started < backstop * timeout_s and _cpu_s(pid) < timeout_s and _computing(pid):
                deadline = now + 0.05  # starved by other work, not slow: wait for its CPU time
                continue
            timed_out = True
            break
        ready, _, _ = _select([fd], [], [], remaining)
        if not ready:
            continue
        chunk = _read(fd, 65536)
        if not chunk:
            break
        buffer += chunk
    if timed_out:
        with contextlib.suppress(OSError):
            _kill(pid, signal.SIGKILL)
    _, status, usage = _wait4(pid, 0)
    _close(fd)
    cpu_s = round(usage.ru_utime + usage.ru_stime, 4)  # what the child computed, whatever the load did to the wall
    partial: list[Any] = []
    final: dict[str, Any] | None = None
    for line in buffer.splitlines():
        try:
            item = _loads(line)
        except ValueError:
            continue
        if isinstance(item, dict) and "final" in item:
            final = item["final"]
        else:
            partial.append(item)
    if timed_out:
        return {"status": "timeout", "partial": partial, "cpu_s": cpu_s}
    if final is None:
        sig = os.WTERMSIG(status) if os.WIFSIGNALED(status) else None
        kind = "cpu" if sig == signal.SIGXCPU else "crashed"
        return {"status": kind, "signal": sig, "code": os.WEXITSTATUS(status) if os.WIFEXITED(status) else None,
                "partial": partial, "cpu_s": cpu_s}
    final["partial"] = partial
    final["cpu_s"] = cpu_s
    return final


SHIPPED = ("_lm_probes.py", "_lm_task.py", "_lm_audit.py", "_lm_runtime.py", "main.py")
AUDIT_MARK = "LMAUDIT "
START = "LMSTART "


def _take_shipped() -> dict[str, str]:
    """The shipped sources, read and then removed from the working folder (with the script and ourselves)."""
    sources = {}
    for name in SHIPPED:
        with contextlib.suppress(OSError):
            with open(name, encoding="utf-8") as handle:
                sources[name] = handle.read()
            os.remove(name)
    sys.modules.pop("_lm_runtime", None)
    return sources


def _namespace(name: str, source: str, judge_ids: set[int]) -> Any:
    """``source`` run as a module that no module table holds."""
    module = types.ModuleType(name)
    judge_ids.add(id(module.__dict__))
    exec(compile(source, name, "exec", dont_inherit=True), module.__dict__)
    return module


def _report(fd: int, spec: dict[str, Any], record: dict[str, Any]) -> None:
    # On a line of its own: a partial line the code left on stdout cannot hide the record by prefixing it.
    data = ("\n" + MARK + str(spec["nonce"]) + " " + _dumps(record, default=str) + "\n").encode()
    while data:
        data = data[_write(fd, data):]


def serve(spec: dict[str, Any]) -> None:
    report = os.dup(1)  # our own copy of stdout: what the code does to fd 1 or sys.stdout does not reach it
    _write(report, f"{START}{spec['nonce']}\n".encode())  # from here on, a missing result is the code's doing
    sources = _take_shipped()
    judge_ids = {id(globals()), id(sys.modules["__main__"].__dict__)}
    reasons: Any = list
    if "_lm_audit.py" in sources:
        audit = _namespace("audit", sources["_lm_audit.py"], judge_ids)
        # A copy of stdout of its own: trials point fd 1 at /dev/null, and their reports must still get out.
        reasons = audit.install(report, judge_ids, "\n" + AUDIT_MARK)  # a line of its own, as _report's
    trials = []
    started = time.monotonic()
    try:
        # The probes bind what they measure with, then import the artifact (once; forks inherit it).
        probes = _namespace("probes", sources["_lm_probes.py"], judge_ids)
        if "_lm_task.py" in sources:
            probes.TASK = _namespace("task", sources["_lm_task.py"], judge_ids)
    except BaseException as exc:
        _report(report, spec, {"import_error": f"{type(exc).__name__}: {exc}"[:300], "introspection": reasons()})
        return
    probe = getattr(probes, "probe_" + spec["probe"])
    for index in range(int(spec.get("trials", 1))):
        read_fd, write_fd = _pipe()
        pid = _fork()
        if pid == 0:
            _close(read_fd)
            code = 0
            try:
                _child(write_fd, probe, spec["args"], int(spec["seed"]) + index, int(spec["mem"]), int(spec["cpu"]),
                       reasons)
            except BaseException:
                code = 3
            _exit(code)
        _close(write_fd)
        trials.append(_collect(pid, read_fd, float(spec["timeout"]), float(spec.get("backstop", 1.0))))
    record = {"trials": trials, "elapsed": round(time.monotonic() - started, 4), "introspection": reasons()}
    _report(report, spec, record)
