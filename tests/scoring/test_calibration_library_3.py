"""Shard 3 of the library's calibration, red agent on (``calibration_library.py`` says why the library is sharded)."""

from __future__ import annotations

from typing import ClassVar

from .calibration_library import MARKS, SHARDS, LibraryCalibration

pytestmark = MARKS


class TestCalibrationShard3(LibraryCalibration):
    TASKS: ClassVar[tuple[str, ...]] = SHARDS[2]
