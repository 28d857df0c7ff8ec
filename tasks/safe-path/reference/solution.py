"""Join an untrusted relative path onto a base directory without escaping it."""

from __future__ import annotations

import os


def safe_join(base_dir: str, user_path: str) -> str:
    """The symlink-resolved absolute path of ``base_dir/user_path``, or ValueError.

    Containment is decided on fully resolved paths with ``os.path.commonpath``,
    which compares whole components: a string-prefix test would accept
    ``/srv/data-evil`` as inside ``/srv/data``.
    """
    if not isinstance(user_path, str) or not isinstance(base_dir, str):
        raise ValueError("base_dir and user_path must be strings")
    if "\x00" in user_path or "\x00" in base_dir:
        raise ValueError("path contains a NUL byte")
    if os.path.isabs(user_path):
        raise ValueError(f"absolute paths are not allowed: {user_path!r}")
    if not os.path.isdir(base_dir):
        raise ValueError(f"base_dir is not an existing directory: {base_dir!r}")
    base = os.path.realpath(base_dir)
    target = os.path.realpath(os.path.join(base, user_path))
    if os.path.commonpath([base, target]) != base:
        raise ValueError(f"path escapes the base directory: {user_path!r}")
    return target
