"""Ship a probe into the sandbox and read its trials back. Nothing of the artifact runs here."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field, replace
from functools import cache
from pathlib import Path
from typing import Any

from logomesh import untrusted
from logomesh.sandbox.base import Sandbox
from logomesh.sandbox.client import harness_source

PROBES_DIR = Path(__file__).with_name("probes")
MARK = "LMPROBE "
AUDIT_MARK = "LMAUDIT "
NO_RESULT = "the probe server printed no result"
START = "LMSTART "  # the probe server's first line, before it imports the code
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
    status: str  # one of STATUSES, or MALFORMED
    result: dict[str, Any] = field(default_factory=dict)
    exc: str = ""
    message: str = ""
    where: tuple[str, ...] = ()
    partial: tuple[dict[str, Any], ...] = ()
    signal: int | None = None
    cpu_s: float = 0.0  # CPU seconds the trial's process used (its wall clock is the load's, not the code's)
    introspection: tuple[str, ...] = ()  # what the audit hook saw the code do to the judge in this trial


@dataclass(frozen=True)
class ProbeRun:
    trials: tuple[Trial, ...]
    harness_error: str = ""  # the probe machinery itself failed: never evidence against the artifact
    duration_s: float = 0.0
    introspection: tuple[str, ...] = ()  # what the audit hook saw the code do to the judge (``harness/audit.py``)


@cache
def _source(name: str) -> str:
    return (PROBES_DIR / name).read_text(encoding="utf-8")


def library_source() -> str:
    """The probe functions (``probes/library.py``): shipped to the fork server, or the body of a probe driver."""
    return _source("library.py")


def probe_files(source: str, task_module: str = "") -> dict[str, str]:
    """What the box gets: the artifact, the fork server, the probes, the audit hook, and the task's own red
    module if any. The fork server removes all but ``solution.py`` before the artifact is imported."""
    files = {"solution.py": source, "_lm_runtime.py": _source("runtime.py"), "_lm_probes.py": library_source(),
             "_lm_audit.py": harness_source("audit.py")}
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
    return f"__import__('_lm_runtime').serve(__import__('json').loads({json.dumps(json.dumps(payload))}))\n"


STATUSES = ("ok", "exception", "timeout", "memory", "crashed", "cpu")  # what the fork server writes
MALFORMED = "malformed"  # a trial whose record the fork server cannot have written: the code forged it


def parse_trial(raw: Any) -> Trial:
    """One trial's record, every field with the type the fork server writes; anything else is ``Malformed``."""
    if not isinstance(raw, dict):
        raise untrusted.Malformed("a trial record is not an object")
    status = untrusted.text(raw, "status", limit=40)
    if status not in STATUSES:
        raise untrusted.Malformed(f"a trial's status is {status!r}")
    return Trial(
        status=status,
        result=untrusted.mapping(raw, "result", None if status == "ok" else {}),
        exc=untrusted.text(raw, "exc", "", limit=200),
        message=untrusted.text(raw, "msg", "", limit=200),
        where=untrusted.texts(raw, "where", [], limit=200),
        partial=untrusted.objects(raw, "partial", []),
        signal=untrusted.optional_integer(raw, "signal"),
        cpu_s=untrusted.number(raw, "cpu_s"),
        introspection=untrusted.texts(raw, "introspection", [], limit=200),
    )


def audit_reports(stdout: str) -> tuple[str, ...]:
    """The audit hook's reports, written the moment they happened (a later crash cannot take them back); a
    report line the hook cannot have written is reported as a forgery."""
    reasons: list[str] = []
    for line in stdout.splitlines():
        if line.startswith(AUDIT_MARK):
            try:
                why = untrusted.text(untrusted.parse_object(line[len(AUDIT_MARK):]), "why", limit=200)
            except untrusted.Malformed as exc:
                why = forged("an audit report", exc)
            if why not in reasons:
                reasons.append(why)
    return tuple(reasons)


def forged(what: str, why: untrusted.Malformed) -> str:
    """The reason a malformed record gives: only the code under test writes one (never the fork server)."""
    return f"forged {what} on the probe's channel ({why})"[:200]


def parse_output(stdout: str, nonce: str, trials: int) -> ProbeRun:
    """The ``LMPROBE <nonce>`` line of the fork server's stdout (a record of ``trials`` trials), with the audit
    hook's reports: those it wrote at once, and those the fork server and each trial listed in their records."""
    parsed = _parse_result(stdout, nonce, trials)
    reasons = list(audit_reports(stdout))
    for trial in parsed.trials:
        reasons += [r for r in trial.introspection if r not in reasons]
    return replace(parsed, introspection=(*reasons, *(r for r in parsed.introspection if r not in reasons)))


def _parse_result(stdout: str, nonce: str, trials: int) -> ProbeRun:
    """The fork server's one result line. Several, or one it cannot have written (too big, too deep, not
    UTF-8 or JSON, a field of the wrong type), were written by the code: a failed observation, reported as
    a look into the judge (a hit of the probe's family and a critical finding), never a harness error."""
    head = f"{MARK}{nonce} "
    lines = [line[len(head):] for line in stdout.splitlines() if line.startswith(head)]
    if not lines:
        return ProbeRun((), harness_error=NO_RESULT)
    try:
        if len(lines) > 1:
            raise untrusted.Malformed(f"{len(lines)} result lines where the probe server writes one")
        return _result_record(untrusted.parse_object(lines[0]), trials)
    except untrusted.Malformed as exc:
        reason = forged("the probe server's result", exc)
        return ProbeRun((Trial(MALFORMED, message=reason),), introspection=(reason,))


def _result_record(data: dict[str, Any], count: int) -> ProbeRun:
    introspection = untrusted.texts(data, "introspection", limit=200)
    if "import_error" in data:
        return ProbeRun((), harness_error=f"the artifact does not import: {untrusted.text(data, 'import_error')}",
                        introspection=introspection)
    trials = tuple(parse_trial(t) for t in untrusted.items(data, "trials"))
    if len(trials) != count:
        raise untrusted.Malformed(f"{len(trials)} trials where the probe server ran {count}")
    return ProbeRun(trials, duration_s=untrusted.number(data, "elapsed"), introspection=introspection)


def run_probe(box: Sandbox, source: str, spec: ProbeSpec, seed: int) -> ProbeRun:
    """Run ``spec`` against ``source`` inside ``box``; harness problems come back as ``harness_error``."""
    wall = spec.trials * (spec.timeout_s * WALL_BACKSTOP + 0.5) + 5.0
    files = probe_files(source, str(spec.args.get(TASK_MODULE, "")))
    run = box.run_script(files, probe_script(spec, seed), timeout_s=wall)
    if run.timed_out:
        return ProbeRun((), harness_error=f"the probe server overran its {wall:.0f} s wall clock",
                        duration_s=run.duration_s)
    nonce = run_nonce(spec, seed)
    parsed = parse_output(run.stdout, nonce, spec.trials)
    if parsed.harness_error == NO_RESULT and f"{START}{nonce}" in run.stdout.splitlines():
        # The probe server imported the code and ended without a word: the code closed its output or ended
        # the process. A probe the code does not survive is not a miss (a crashed trial, which the families
        # that need the code to survive count as a hit).
        ended = Trial("crashed", message="the probe server ended without reporting, after importing the code")
        return replace(parsed, trials=(ended,), harness_error="", duration_s=run.duration_s)
    if parsed.harness_error and run.stderr.strip():
        tail = run.stderr.strip().splitlines()[-1][:200]
        return replace(parsed, harness_error=f"{parsed.harness_error} ({tail})", duration_s=run.duration_s)
    return replace(parsed, duration_s=run.duration_s)
