"""``sandbox doctor``: try every backend for real and say why one does not work."""

from __future__ import annotations

import time
from dataclasses import dataclass

from logomesh.sandbox.base import DEFAULT_LIMITS, Limits, SandboxUnavailable
from logomesh.sandbox.choose import BACKENDS, open_sandbox

PROBE_TESTS = {
    "test_probe.py": (
        "import unittest\nfrom solution import VALUE\n\n\n"
        "class TestProbe(unittest.TestCase):\n    def test_value(self):\n        self.assertEqual(VALUE, 42)\n"
    )
}
PROBE_SOLUTION = "VALUE = 42\n"


@dataclass(frozen=True)
class BackendReport:
    backend: str
    ok: bool
    detail: str  # the image id when ok, else the one-line reason
    start_s: float = 0.0
    suite_s: float = 0.0
    note: str = ""  # how limits are enforced, when it varies by host


def check_backend(kind: str, limits: Limits = DEFAULT_LIMITS) -> BackendReport:
    """Open ``kind``, run a one-test suite, and report what happened."""
    started = time.perf_counter()
    try:
        box = open_sandbox(kind, limits)
    except SandboxUnavailable as exc:
        return BackendReport(kind, False, str(exc))
    opened = time.perf_counter()
    try:
        run = box.run_suite(PROBE_SOLUTION, PROBE_TESTS, timeout_s=20)
        finished = time.perf_counter()
        if run.passed != 1:
            reason = run.error or (run.outcomes[0].reason if run.outcomes else "no result")
            return BackendReport(kind, False, f"the probe suite did not pass: {reason}")
        note = str(getattr(box, "limits_note", ""))
        return BackendReport(kind, True, box.image_id, opened - started, finished - opened, note)
    finally:
        box.close()


def check_all(limits: Limits = DEFAULT_LIMITS) -> list[BackendReport]:
    return [check_backend(kind, limits) for kind in BACKENDS]
