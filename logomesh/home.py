"""Where LogoMesh keeps its state: the ledger, keys, checkpoints and DBOMs."""

from __future__ import annotations

import os
from pathlib import Path

DEFAULT_HOME = Path.home() / ".local" / "share" / "logomesh"


def resolve_home(home: Path | None) -> Path:
    """``--home`` if given, else ``$LOGOMESH_HOME``, else ``~/.local/share/logomesh``; created."""
    chosen = home or (Path(os.environ["LOGOMESH_HOME"]) if os.environ.get("LOGOMESH_HOME") else None)
    path = (chosen or DEFAULT_HOME).expanduser().resolve()
    path.mkdir(parents=True, exist_ok=True)
    return path
