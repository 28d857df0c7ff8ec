"""Where LogoMesh keeps its state: the ledger, keys, checkpoints and DBOMs."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

DEFAULT_HOME = Path.home() / ".local" / "share" / "logomesh"
_FIX = "choose a writable folder with --home or $LOGOMESH_HOME"
# Room a battle's record needs: the entry and its input blobs (a purple answer is capped at a few MiB), the
# DBOM copy, a checkpoint and SQLite's journal, with a margin.
MIN_FREE_BYTES = 64 * 2**20


class HomeError(ValueError):
    """The state folder cannot be used; the message names it and the fix."""


def resolve_home(home: Path | None, *, create: bool = True) -> Path:
    """``--home`` if given, else ``$LOGOMESH_HOME``, else ``~/.local/share/logomesh``.

    ``create``: made if missing and checked writable (``HomeError`` naming the fix if not). Read-only commands
    pass ``create=False``: they get the path and create nothing, and say themselves what is missing there.
    """
    chosen = home or (Path(os.environ["LOGOMESH_HOME"]) if os.environ.get("LOGOMESH_HOME") else None)
    path = (chosen or DEFAULT_HOME).expanduser().resolve()
    if path.exists() and not path.is_dir():
        raise HomeError(f"the state folder {path} is a file: choose a folder with --home or $LOGOMESH_HOME")
    return ensure_home(path) if create else path


def writable_home(home: Path | None) -> Path:
    """The state folder a command will write to once its checks pass: usable or creatable, but not created yet.

    A command that may be refused before it records anything (a battle's or a campaign's pre-flight) takes
    this, so a refusal leaves no empty folder behind; whatever records first (``Ledger.open``) creates it.
    """
    path = resolve_home(home, create=False)
    existing = path
    while not existing.exists():
        existing = existing.parent
    if not existing.is_dir():
        raise HomeError(f"cannot create the state folder {path} ({existing} is a file): {_FIX}")
    if why := _cannot_create_in(existing):
        what = "the state folder" if existing == path else f"cannot create the state folder {path}:"
        raise HomeError(f"{what} {existing} is not writable ({why}): {_FIX}")
    free = shutil.disk_usage(existing).free
    if free < MIN_FREE_BYTES:
        raise HomeError(f"the state folder {path} has {free / 2**20:.1f} MiB free, less than the "
                        f"{MIN_FREE_BYTES // 2**20} MiB a battle's record needs: free some space or {_FIX}")
    return path


def _cannot_create_in(folder: Path) -> str | None:
    """Why nothing can be created in ``folder`` (tried, then removed: permissions alone do not tell, for root
    or under /proc and /sys), or ``None``."""
    try:
        probe = tempfile.mkdtemp(prefix=".logomesh-probe-", dir=folder)
    except OSError as exc:
        return exc.strerror or type(exc).__name__
    os.rmdir(probe)
    return None


def ensure_home(path: Path) -> Path:
    """``path`` created if missing and checked writable (``HomeError`` naming the fix if not)."""
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise HomeError(f"cannot create the state folder {path} ({exc.strerror or exc}): {_FIX}") from None
    if not os.access(path, os.W_OK | os.X_OK):
        raise HomeError(f"the state folder {path} is not writable: {_FIX}")
    return path
