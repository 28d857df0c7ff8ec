"""``logomesh sandbox doctor|build``."""

from __future__ import annotations

import json
import sys
from dataclasses import asdict
from typing import Annotated

import typer

from logomesh.commands.common import EXIT_USAGE, JsonOption, fail

app = typer.Typer(help="Check and build the sandbox.", no_args_is_help=True)


@app.command("doctor")
def doctor(as_json: JsonOption = False) -> None:
    """Say which sandbox backends work here, and why not; sweep what killed battles left. Exit 1 when none works."""
    from logomesh.sandbox.cgroup import sweep_orphans
    from logomesh.sandbox.doctor import check_all

    swept = sweep_orphans()
    if swept:
        print(f"removed {len(swept)} empty cgroup directories left by killed bubblewrap sandboxes", file=sys.stderr)
    reports = check_all()
    if as_json:
        print(json.dumps([asdict(r) for r in reports], indent=2))
    else:
        for r in reports:
            if r.ok:
                timing = f"start {r.start_s:.2f} s, probe suite {r.suite_s * 1000:.0f} ms"
                note = f"  [{r.note}]" if r.note else ""
                print(f"{r.backend:<7} ok    {timing}  {r.detail}{note}")
            else:
                print(f"{r.backend:<7} no    {r.detail}")
    if not any(r.ok for r in reports):
        fail("no sandbox backend works here: run `logomesh sandbox build --offline`"
             " (add --root-only for bubblewrap without Docker)")


@app.command("build")
def build(
    offline: Annotated[
        bool, typer.Option("--offline", help="debootstrap a Debian root and `docker import` it (no registry).")
    ] = False,
    force: Annotated[bool, typer.Option("--force", help="Rebuild even if the image already exists.")] = False,
    root_only: Annotated[
        bool, typer.Option("--root-only", help="With --offline: only the root bubblewrap runs; no Docker needed.")
    ] = False,
    as_json: JsonOption = False,
) -> None:
    """Build the sandbox image logomesh-sandbox:<version>-py<python> and its root for bubblewrap (kept if present)."""
    from logomesh.sandbox.image import ImageBuildError, build_offline, build_online

    def log(line: str) -> None:
        print(line, file=sys.stderr)

    if root_only and not offline:
        fail("--root-only builds with debootstrap: add --offline", code=EXIT_USAGE)
    try:
        if offline:
            result = build_offline(force=force, log=log, root_only=root_only)
        else:
            result = build_online(force=force, log=log)
    except ImageBuildError as exc:
        fail(str(exc))
    if as_json:
        print(json.dumps(asdict(result)))
    else:
        state = "built" if result.built else "already present (use --force to rebuild)"
        print(f"{result.tag} {result.image_id or '(no image: root only)'} {state}; root {result.root}")
