"""The probe fork server. Stdlib only; runs INSIDE the sandbox, never on the host.

Shipped into the box as ``_lm_runtime.py`` next to ``solution.py`` and
``_lm_probes.py``. ``serve(spec)`` imports the artifact once, then forks one
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
from typing import Any

MARK = "LMPROBE "


def _vm_size() -> int:
    try:
        with open("/proc/self/status", encoding="ascii") as handle:
            for line in handle:
                if line.startswith("VmSize:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 64 * 1024 * 1024


def _child(fd: int, probe: Any, args: dict[str, Any], seed: int, mem: int, cpu_s: int) -> None:
    def emit(record: dict[str, Any]) -> None:
        os.write(fd, (json.dumps(record, default=str) + "\n").encode())

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
        ready, _, _ = select.select([fd], [], [], remaining)
        if not ready:
            continue
        chunk = os.read(fd, 65536)
        if not chunk:
            break
        buffer += chunk
    if timed_out:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)
    _, status, usage = os.wait4(pid, 0)
    os.close(fd)
    cpu_s = round(usage.ru_utime + usage.ru_stime, 4)  # what the child computed, whatever the load did to the wall
    partial: list[Any] = []
    final: dict[str, Any] | None = None
    for line in buffer.splitlines():
        try:
            item = json.loads(line)
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


def serve(spec: dict[str, Any]) -> None:
    import _lm_probes  # type: ignore[import-not-found]

    trials = []
    started = time.monotonic()
    try:
        import solution  # type: ignore[import-not-found]  # noqa: F401 - imported once, inherited by forks
    except BaseException as exc:
        print(MARK + str(spec["nonce"]) + " " + json.dumps({"import_error": f"{type(exc).__name__}: {exc}"[:300]}))
        return
    probe = getattr(_lm_probes, "probe_" + spec["probe"])
    for index in range(int(spec.get("trials", 1))):
        read_fd, write_fd = os.pipe()
        sys.stdout.flush()
        pid = os.fork()
        if pid == 0:
            os.close(read_fd)
            code = 0
            try:
                _child(write_fd, probe, spec["args"], int(spec["seed"]) + index, int(spec["mem"]), int(spec["cpu"]))
            except BaseException:
                code = 3
            os._exit(code)
        os.close(write_fd)
        trials.append(_collect(pid, read_fd, float(spec["timeout"]), float(spec.get("backstop", 1.0))))
    record = {"trials": trials, "elapsed": round(time.monotonic() - started, 4)}
    print(MARK + str(spec["nonce"]) + " " + json.dumps(record, default=str))
