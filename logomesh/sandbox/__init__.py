"""Run untrusted code in a locked-down box: Docker, or bubblewrap where Docker is missing.

``open_sandbox(kind)`` is the entry point; see ``base.py`` for the result
types and ``harness/`` for the code that runs inside the box.
"""

from logomesh.sandbox.base import (
    DEFAULT_LIMITS,
    Limits,
    Observed,
    ObservedSuite,
    Sandbox,
    SandboxBroken,
    SandboxUnavailable,
    ScriptRun,
    SuiteRun,
    TestOutcome,
    TestStatus,
)
from logomesh.sandbox.choose import kinds, open_sandbox

__all__ = [
    "DEFAULT_LIMITS",
    "Limits",
    "Observed",
    "ObservedSuite",
    "Sandbox",
    "SandboxBroken",
    "SandboxUnavailable",
    "ScriptRun",
    "SuiteRun",
    "TestOutcome",
    "TestStatus",
    "kinds",
    "open_sandbox",
]
