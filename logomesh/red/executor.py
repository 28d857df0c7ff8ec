"""Ship a probe into the sandbox and read its trials back. Nothing of the artifact runs here."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from logomesh.sandbox.base import Sandbox

PROBES_DIR = Path(__file__).with_name("probes")
MARK = "LMPROBE "
TASK_MODULE = "task_module"  # a probe argument: the task's red.py, shipped as ``_lm_task.py``, not inlined
DEFAULT_MEMORY = 64 * 1024 * 1024  # per trial, on top of what the fork server already maps
# A trial still computing at its timeout runs on until it has used its timeout in CPU, up to this multiple
# of it in wall clock: a loaded machine slows a probe down but does not change its verdict (runtime._collect).
WALL_BACKSTOP = 5.0


@dataclass(frozen=True)
class ProbeSpec:
    probe: str  # the name of a ``probe_<name>`` in probes/library.py
    args: dict[str, Any]
    trials: int = 1
    timeout_s: float = 3.0  # per trial, in CPU seconds (wall clock for a trial that waits), enforced from outside
    memory_bytes: int = DEFAULT_MEMORY


@dataclass(frozen=True)
class Trial:
    status: str  # ok | exception | timeout | memory | crashed | cpu
    result: dict[str, Any] = field(default_factory=dict)
    exc: str = ""
    message: str = ""
    where: tuple[str, ...] = ()
    partial: tuple[dict[str, Any], ...] = ()
    signal: int | None = None
    cpu_s: float = 0.0  # CPU seconds the trial's process used (its wall clock is the load's, not the code's)


@dataclass(frozen=True)
class ProbeRun:
    trials: tuple[Trial, ...]
    harness_error: str = ""  # the probe machinery itself failed: never evidence against the artifact
    duration_s: float = 0.0


@cache
def _source(name: str) -> str:
    return (PROBES_DIR / name).read_text(encoding="utf-8")


def probe_files(source: str, task_module: str = "") -> dict[str, str]:
    """What the box gets: the artifact, the fork server, the probes, and the task's own red module if any."""
    files = {"solution.py": source, "_lm_runtime.py": _source("runtime.py"), "_lm_probes.py": _source("library.py")}
    if task_module:
        files["_lm_task.py"] = task_module
    return files


def run_nonce(spec: ProbeSpec, seed: int) -> str:
    """Tags the fork server's result line, so text the artifact prints cannot pass for it."""
    text = json.dumps([spec.probe, spec.args, spec.trials, seed], sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def probe_script(spec: ProbeSpec, seed: int) -> str:
    payload = {
        "nonce": run_nonce(spec, seed),
        "probe": spec.probe,
        "args": {k: v for k, v in spec.args.items() if k != TASK_MODULE},
        "trials": spec.trials,
        "timeout": spec.timeout_s,
        "backstop": WALL_BACKSTOP,
        "mem": spec.memory_bytes,
        "cpu": max(1, int(spec.timeout_s) + 1),
        "seed": seed,
    }
    return f"import json, _lm_runtime\n_lm_runtime.serve(json.loads({json.dumps(json.dumps(payload))}))\n"


def parse_trial(raw: Any) -> Trial:
    if not isinstance(raw, dict):
        return Trial("crashed", message="unreadable trial record")
    result = raw.get("result")
    partial = raw.get("partial")
    where = raw.get("where")
    sig = raw.get("signal")
    cpu = raw.get("cpu_s")
    return Trial(
        status=str(raw.get("status", "crashed")),
        result=result if isinstance(result, dict) else {},
        exc=str(raw.get("exc", "")),
        message=str(raw.get("msg", "")),
        where=tuple(str(w) for w in where) if isinstance(where, list) else (),
        partial=tuple(p for p in partial if isinstance(p, dict)) if isinstance(partial, list) else (),
        signal=sig if isinstance(sig, int) else None,
        cpu_s=float(cpu) if isinstance(cpu, int | float) else 0.0,
    )


def parse_output(stdout: str, nonce: str) -> ProbeRun:
    """The last ``LMPROBE <nonce>`` line of the fork server's stdout."""
    head = f"{MARK}{nonce} "
    lines = [line[len(head) - len(MARK):] for line in stdout.splitlines() if line.startswith(head)]
    if not lines:
        return ProbeRun((), harness_error="the probe server printed no result")
    try:
        data = json.loads(lines[-1][len(MARK):])
    except ValueError:
        return ProbeRun((), harness_error="the probe server's result is not JSON")
    if not isinstance(data, dict):
        return ProbeRun((), harness_error="the probe server's result is not an object")
    if "import_error" in data:
        return ProbeRun((), harness_error=f"the artifact does not import: {data['import_error']}")
    trials = data.get("trials")
    if not isinstance(trials, list):
        return ProbeRun((), harness_error="the probe server's result has no trials")
    return ProbeRun(tuple(parse_trial(t) for t in trials), duration_s=float(data.get("elapsed", 0.0)))


def run_probe(box: Sandbox, source: str, spec: ProbeSpec, seed: int) -> ProbeRun:
    """Run ``spec`` against ``source`` inside ``box``; harness problems come back as ``harness_error``."""
    wall = spec.trials * (spec.timeout_s * WALL_BACKSTOP + 0.5) + 5.0
    files = probe_files(source, str(spec.args.get(TASK_MODULE, "")))
    run = box.run_script(files, probe_script(spec, seed), timeout_s=wall)
    if run.timed_out:
        return ProbeRun((), harness_error=f"the probe server overran its {wall:.0f} s wall clock",
                        duration_s=run.duration_s)
    parsed = parse_output(run.stdout, run_nonce(spec, seed))
    if parsed.harness_error and run.stderr.strip():
        tail = run.stderr.strip().splitlines()[-1][:200]
        return ProbeRun((), harness_error=f"{parsed.harness_error} ({tail})", duration_s=run.duration_s)
    return ProbeRun(parsed.trials, parsed.harness_error, run.duration_s)
