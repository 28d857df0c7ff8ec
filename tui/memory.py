"""Keeping the garbage collector's full passes out of the live battle."""

from __future__ import annotations

import gc


def settle_garbage() -> None:
    """Collect now and move what survives out of the collector's sight.

    A full collection over the interpreter, Textual and the scoring model's modules takes 50-100 ms
    and would otherwise land in the middle of a battle's event stream as a frozen frame. Called at
    start-up and after each battle (a quiet moment); unfreezing first lets the previous battle's
    tree be collected.
    """
    gc.unfreeze()
    gc.collect()
    gc.freeze()
