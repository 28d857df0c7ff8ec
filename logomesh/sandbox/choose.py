"""``open_sandbox``: pick a backend, or fail with one line naming the fix. Never the host.

The backends are a registry (``register_backend``): a name, how to open one, whether ``auto`` tries it and
how to remove what killed runs of it left behind. The built-in ones are named by ``module:attribute`` and
imported only when used, so choosing bubblewrap never loads Docker's code (docs/EXTENDING.md, "Sandbox backends").
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from logomesh.lazy import register, resolve
from logomesh.sandbox.base import DEFAULT_LIMITS, Limits, Sandbox, SandboxUnavailable

Opener = Callable[..., Sandbox]  # called as ``opener(limits=limits)``; raises SandboxUnavailable where it cannot
Sweep = Callable[[], object]  # removes what runs of this backend killed from outside left behind


@dataclass(frozen=True)
class BackendKind:
    """One sandbox backend: ``opener`` and ``sweep`` are callables, or ``"module:attribute"`` imported on use."""

    name: str
    opener: Opener | str
    auto: bool = False  # tried by ``auto``, in registration order
    sweep: Sweep | str | None = None  # None: nothing outlives a run (its processes die with their parent)

    def open(self, limits: Limits) -> Sandbox:
        opener: Opener = resolve(self.opener)
        return opener(limits=limits)

    def sweep_orphans(self) -> None:
        if self.sweep is not None:
            sweep: Sweep = resolve(self.sweep)
            sweep()


BACKENDS: dict[str, BackendKind] = {}


def register_backend(kind: BackendKind) -> BackendKind:
    """Add a backend under ``kind.name`` (``auto`` tries those with ``auto=True`` in the order added)."""
    if kind.name == "auto":
        raise ValueError("sandbox backend 'auto' is already registered")
    register(BACKENDS, kind.name, kind, "sandbox backend")
    return kind


register_backend(BackendKind("docker", "logomesh.sandbox.docker:DockerSandbox", auto=True,
                             sweep="logomesh.sandbox.docker:remove_orphans"))
register_backend(BackendKind("bwrap", "logomesh.sandbox.bwrap:BwrapSandbox", auto=True))


def kinds() -> tuple[str, ...]:
    """What ``--sandbox`` accepts: ``auto`` and every registered backend."""
    return ("auto", *BACKENDS)


def auto_candidates() -> tuple[str, ...]:
    """The backends ``auto`` tries, in order."""
    return tuple(name for name, kind in BACKENDS.items() if kind.auto)


def sweep_orphans(kind: str) -> None:
    """Remove what killed runs of the backend(s) ``kind`` may open left behind (``auto``: every candidate)."""
    for name in auto_candidates() if kind == "auto" else (kind,):
        if name in BACKENDS:
            BACKENDS[name].sweep_orphans()


def open_sandbox(kind: str = "auto", limits: Limits = DEFAULT_LIMITS) -> Sandbox:
    """An open sandbox of ``kind`` (``auto`` tries Docker, then bubblewrap), which closes itself at the end of a
    ``with`` block: ``with open_sandbox("auto") as box: box.run_suite(...)``. ``SandboxUnavailable`` (one line
    naming the fix) where none opens; never the host."""
    if kind not in kinds():
        raise SandboxUnavailable(f"unknown sandbox {kind!r}: use one of {', '.join(kinds())}")
    if kind != "auto":
        return BACKENDS[kind].open(limits)
    problems: list[str] = []
    for candidate in auto_candidates():
        try:
            return BACKENDS[candidate].open(limits)
        except SandboxUnavailable as exc:
            problems.append(f"{candidate}: {exc}")
    raise SandboxUnavailable("no sandbox works here (" + "; ".join(problems) + ")")
