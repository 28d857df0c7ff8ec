"""Build a parameterised sqlite3 SELECT from validated identifiers."""

from __future__ import annotations

import re
from typing import Mapping, Sequence, Tuple

# fullmatch with an explicit ASCII class: ``$`` would accept a trailing newline
# and ``\\w`` would accept non-ASCII letters.
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _quote(name: object) -> str:
    """Validate an identifier and double-quote it (so keywords like ``order`` work)."""
    if not isinstance(name, str) or _IDENTIFIER.fullmatch(name) is None:
        raise ValueError(f"invalid SQL identifier: {name!r}")
    return f'"{name}"'


def build_select(table: str, columns: Sequence[str], where: Mapping[str, object]) -> Tuple[str, tuple]:
    """``(sql, params)`` for ``sqlite3.Connection.execute``; values only ever travel in params."""
    select_list = ", ".join(_quote(c) for c in columns) if columns else "*"
    sql = f"SELECT {select_list} FROM {_quote(table)}"
    conditions = [f"{_quote(key)} = ?" for key in where]
    if conditions:
        sql += " WHERE " + " AND ".join(conditions)
    return sql, tuple(where.values())
