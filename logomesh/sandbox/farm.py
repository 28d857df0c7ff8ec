"""A bubblewrap box's own folders of the interpreter's library: a farm of hard links, made per box.

The harness server records the modules the code loads by watching the library's folders with inotify
(``harness/server.py``, ``ImportWatch``). A watch belongs to a directory's inode, and every bubblewrap box binds
the same root: a watch in one box would see the opens of every box on the host (two battles at once). So each box
gets new directories, holding hard links to the root's files (no file is copied), bound over the library's
folders; its watch then sees its own processes alone. Measured on the offline root (1,502 files, 135 folders):
15-30 ms to make, 160-230 ms to remove, no data written. Where a farm cannot be made (hard links refused, another
filesystem), the box runs without one and its server records nothing, which A's ``rests_on`` then says.
"""

from __future__ import annotations

import contextlib
import os
import shutil
from pathlib import Path

from logomesh.sandbox.cgroup import orphaned, owned_name

FARMS = ".farms"  # beside the roots, on their filesystem (hard links cannot cross one)


def farms_dir(root: Path) -> Path:
    return root.parent / FARMS


def make_farm(root: Path, library: tuple[str, ...]) -> tuple[Path, list[str]] | None:
    """A fresh farm of the ``library`` folders (paths inside the box) that ``root`` has: its directory and the
    folders it holds (each at ``<farm>/<path>``). None where it cannot be made (what was made is removed)."""
    sweep_farms(root)
    farm = farms_dir(root) / owned_name()
    present = [place for place in library if (root / place.lstrip("/")).is_dir()]
    try:
        for place in present:
            _mirror(root / place.lstrip("/"), farm / place.lstrip("/"))
    except OSError:
        remove_farm(farm)
        return None
    return farm, present


def _mirror(source: Path, target: Path) -> None:
    """``target``: new directories shaped as ``source``'s, its files hard links, its symbolic links copied."""
    for folder, dirs, files in os.walk(source):
        here = target / os.path.relpath(folder, source)
        here.mkdir(parents=True, exist_ok=True)
        for name in files + [d for d in dirs if os.path.islink(os.path.join(folder, d))]:
            path = os.path.join(folder, name)
            if os.path.islink(path):
                os.symlink(os.readlink(path), here / name)
            else:
                os.link(path, here / name, follow_symlinks=False)


def remove_farm(farm: Path) -> None:
    shutil.rmtree(farm, ignore_errors=True)


def sweep_farms(root: Path) -> None:
    """Remove the farms whose box's owner died (a SIGKILLed battle), as ``cgroup.sweep_orphans`` does."""
    with contextlib.suppress(OSError):
        for farm in farms_dir(root).iterdir():
            if orphaned(farm.name):
                remove_farm(farm)
