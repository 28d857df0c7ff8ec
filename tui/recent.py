"""Recently used purple-agent URLs, remembered in ``<home>/console.json``."""

from __future__ import annotations

import json
from pathlib import Path

MAX_RECENT = 8
FILE_NAME = "console.json"


def _path(home: Path) -> Path:
    return home / FILE_NAME


def load_recent_urls(home: Path) -> list[str]:
    """The remembered URLs, newest first; an unreadable file counts as none."""
    try:
        data = json.loads(_path(home).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    urls = data.get("recent_purple_urls", []) if isinstance(data, dict) else []
    return [url for url in urls if isinstance(url, str)][:MAX_RECENT]


def remember_url(home: Path, url: str) -> list[str]:
    """Put ``url`` first, keep ``MAX_RECENT``, write the file; returns the new list."""
    urls = [url, *(known for known in load_recent_urls(home) if known != url)][:MAX_RECENT]
    path = _path(home)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps({"recent_purple_urls": urls}, indent=2) + "\n", encoding="utf-8")
    tmp.replace(path)
    return urls
