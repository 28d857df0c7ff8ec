"""``open_sandbox``: pick a backend, or fail with one line naming the fix. Never the host."""

from __future__ import annotations

from logomesh.sandbox.base import DEFAULT_LIMITS, Limits, Sandbox, SandboxUnavailable

KINDS = ("auto", "docker", "bwrap")


def _open(kind: str, limits: Limits) -> Sandbox:
    if kind == "docker":
        from logomesh.sandbox.docker import DockerSandbox

        return DockerSandbox(limits=limits)
    from logomesh.sandbox.bwrap import BwrapSandbox

    return BwrapSandbox(limits=limits)


def open_sandbox(kind: str = "auto", limits: Limits = DEFAULT_LIMITS) -> Sandbox:
    """An open sandbox of ``kind`` (``auto`` tries Docker, then bubblewrap), which closes itself at the end of a
    ``with`` block: ``with open_sandbox("auto") as box: box.run_suite(...)``. ``SandboxUnavailable`` (one line
    naming the fix) where none opens; never the host."""
    if kind not in KINDS:
        raise SandboxUnavailable(f"unknown sandbox {kind!r}: use one of {', '.join(KINDS)}")
    if kind != "auto":
        return _open(kind, limits)
    problems: list[str] = []
    for candidate in ("docker", "bwrap"):
        try:
            return _open(candidate, limits)
        except SandboxUnavailable as exc:
            problems.append(f"{candidate}: {exc}")
    raise SandboxUnavailable("no sandbox works here (" + "; ".join(problems) + ")")
