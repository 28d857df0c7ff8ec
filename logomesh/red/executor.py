"""A probe's spec, its trials and how a trial's record is read. Nothing of the artifact runs here.

Every probe runs as an observation driver (``driven.py``): the probe library (``probes/library.py``) in the
judge's driver process, the code in the answerer, and each trial's record, written by the driver, is read
here as strictly as anything from the box (``parse_trial``).

The probes are a registry: every ``probe_<name>`` the library defines, read from its source, and any probe
added with ``register_probe(name, source)``, whose box-side source is appended to the library in the drivers
that run it (docs/EXTENDING.md, "Attack families").
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from logomesh import untrusted
from logomesh.syntax import parse

PROBES_DIR = Path(__file__).with_name("probes")
TASK_MODULE = "task_module"  # a probe argument: the task's red.py, run in the driver beside the probe library
# A trial still computing at its timeout runs on until it has used its timeout in CPU, up to this multiple
# of it in wall clock: a loaded machine slows a probe down but does not change its verdict (library.Watchdog).
WALL_BACKSTOP = 5.0


@dataclass(frozen=True)
class ProbeSpec:
    probe: str  # a registered probe (``probe_names``): ``probe_<name>`` in probes/library.py or ``register_probe``
    args: dict[str, Any]
    trials: int = 1
    timeout_s: float = 3.0  # per trial, in CPU seconds (wall clock for a trial that waits), enforced from outside
    setting: int = 0  # which of the battle's settings the code's process starts in (sandbox/setting.py; 0: classic)


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


PROBE_PREFIX = "probe_"
EXTRA_PROBES: dict[str, str] = {}  # probe name -> the box-side source (stdlib only) that defines probe_<name>


@cache
def library_probes() -> frozenset[str]:
    """The probes ``probes/library.py`` defines: its module-level ``probe_<name>`` functions."""
    tree = parse(library_source())
    return frozenset(node.name.removeprefix(PROBE_PREFIX) for node in tree.body
                     if isinstance(node, ast.FunctionDef) and node.name.startswith(PROBE_PREFIX))


def register_probe(name: str, source: str) -> None:
    """Add the probe ``name``: ``source`` runs in the box after the library and defines ``probe_<name>(args, seed,
    emit)``, which returns the trial's JSON-able result."""
    if name in probe_names():
        raise ValueError(f"probe {name!r} is already registered")
    defined = {n.name for n in parse(source).body if isinstance(n, ast.FunctionDef)}
    if PROBE_PREFIX + name not in defined:
        raise ValueError(f"the source of probe {name!r} defines no {PROBE_PREFIX}{name}")
    EXTRA_PROBES[name] = source


def probe_names() -> frozenset[str]:
    """Every probe a driver can run: the library's and the registered ones."""
    return library_probes() | frozenset(EXTRA_PROBES)


def driver_library(probe: str) -> str:
    """What a driver running ``probe`` starts with: the library, and the probe's own source where it has one."""
    extra = EXTRA_PROBES.get(probe)
    return library_source() if extra is None else library_source() + "\n\n" + extra


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
