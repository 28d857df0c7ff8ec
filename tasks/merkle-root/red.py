"""Red-agent scenarios for merkle-root. Stdlib only; runs INSIDE the sandbox, in the judge's driver process.

The interface is in docs/tasks.md, "Red-agent scenarios"; the [red] tables of
task.toml say which of these the red agent uses and how it describes them.
"""

from __future__ import annotations

from typing import Any

import solution


def grow(size: int) -> Any:
    """Independent calls on fresh inputs: a pure function keeps nothing between them."""
    for i in range(size):
        solution.merkle_root([b"leaf-%d" % i, b"other-%d" % i])
    return None
