"""A probe's spec, its trials and how a trial's record is read. Nothing of the artifact runs here.

Every probe runs as an observation driver (``driven.py``): the probe library (``probes/library.py``) in the
judge's driver process, the code in the answerer, and each trial's record, written by the driver, is read
here as strictly as anything from the box (``parse_trial``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from logomesh import untrusted

PROBES_DIR = Path(__file__).with_name("probes")
TASK_MODULE = "task_module"  # a probe argument: the task's red.py, run in the driver beside the probe library
# A trial still computing at its timeout runs on until it has used its timeout in CPU, up to this multiple
# of it in wall clock: a loaded machine slows a probe down but does not change its verdict (library.Watchdog).
WALL_BACKSTOP = 5.0


@dataclass(frozen=True)
class ProbeSpec:
    probe: str  # the name of a ``probe_<name>`` in probes/library.py
    args: dict[str, Any]
    trials: int = 1
    timeout_s: float = 3.0  # per trial, in CPU seconds (wall clock for a trial that waits), enforced from outside


@dataclass(frozen=True)
class Trial:
    status: str  # one of STATUSES, or MALFORMED
    result: dict[str, Any] = field(default_factory=dict)
    exc: str = ""
    message: str = ""
    where: tuple[str, ...] = ()
    cpu_s: float = 0.0  # CPU seconds the code used in the trial, read from the kernel (its wall time is the load's)
    introspection: tuple[str, ...] = ()  # what the code was seen doing to the judge's instrument in this trial


@dataclass(frozen=True)
class ProbeRun:
    trials: tuple[Trial, ...]
    harness_error: str = ""  # the probe machinery itself failed: never evidence against the artifact
    duration_s: float = 0.0
    introspection: tuple[str, ...] = ()  # what the code was seen doing to the judge's instrument (its trials')


@cache
def _source(name: str) -> str:
    return (PROBES_DIR / name).read_text(encoding="utf-8")


def library_source() -> str:
    """The probe functions (``probes/library.py``): the body of every probe driver."""
    return _source("library.py")


STATUSES = ("ok", "exception", "timeout", "memory", "crashed", "cpu", "starved")  # what a probe driver writes
MALFORMED = "malformed"  # a trial whose record no probe driver writes


def parse_trial(raw: Any) -> Trial:
    """One trial's record, every field with the type the probe driver writes; anything else is ``Malformed``."""
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
        cpu_s=untrusted.number(raw, "cpu_s"),
        introspection=untrusted.texts(raw, "introspection", [], limit=200),
    )
