"""Where LogoMesh keeps its state: the ledger, keys, checkpoints and DBOMs."""

from __future__ import annotations

import os
from pathlib import Path

DEFAULT_HOME = Path.home() / ".local" / "share" / "logomesh"


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
    if not create:
        return path
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise HomeError(f"cannot create the state folder {path} ({exc.strerror or exc}): choose a writable "
                        "folder with --home or $LOGOMESH_HOME") from None
    if not os.access(path, os.W_OK | os.X_OK):
        raise HomeError(f"the state folder {path} is not writable: choose a writable folder with --home or "
                        "$LOGOMESH_HOME")
    return path
