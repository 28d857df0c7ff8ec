"""Types every sandbox backend shares: results, the protocol, the limits.

A backend runs untrusted code; it never falls back to the host. Hidden
suites come back as observations (``ObservedSuite``), judged on the host by
``verdict.py`` against the reference's; the purple agent's own tests come
back as verdicts (``SuiteRun``) from the runner that ran next to the code
they test (see ``docs/sandbox.md`` for the threat model).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from types import TracebackType
from typing import TYPE_CHECKING, Any, Literal, Protocol

if TYPE_CHECKING:
    from logomesh.sandbox.setting import Setting

TestStatus = Literal["passed", "failed", "error", "timeout", "crashed"]
ObservedStatus = Literal["observed", "error", "timeout", "crashed"]
Backend = str  # a registered backend's name (``choose.BACKENDS``): "docker", "bwrap", …
OutputSink = Callable[[str, str, str], None]  # (origin, "stdout"|"stderr", text)


class SandboxUnavailable(RuntimeError):
    """No sandbox can run here; the message is one line naming the fix."""


class SandboxBroken(RuntimeError):
    """An open sandbox stopped answering (its harness died or was killed)."""


@dataclass(frozen=True)
class Limits:
    """Resource limits; the same numbers drive both backends."""

    memory_bytes: int = 128 * 1024 * 1024
    nano_cpus: int = 500_000_000  # half a CPU (Docker)
    pids: int = 50
    tmpfs_bytes: int = 64 * 1024 * 1024
    output_bytes: int = 64 * 1024  # per stream per run, kept and forwarded
    file_bytes: int = 16 * 1024 * 1024  # RLIMIT_FSIZE for untrusted processes
    process_memory_bytes: int = 1024 * 1024 * 1024  # RLIMIT_DATA per process (without a cgroup, the memory limit)
    open_files: int = 256
    cpu_seconds: int = 120  # RLIMIT_CPU per untrusted process (CPU time, not wall clock)
    nice: int = 10  # untrusted processes yield to the host (bubblewrap has no CPU quota)
    test_timeout_s: float = 10.0  # one test; the suite has its own wall clock


DEFAULT_LIMITS = Limits()


@dataclass(frozen=True)
class TestOutcome:
    name: str  # "test_x.TestA.test_b"
    status: TestStatus
    reason: str = ""
    duration_s: float = 0.0


@dataclass(frozen=True)
class Loaded:
    """The modules the code's processes loaded during a hidden suite run, recorded by the harness server from
    outside them (file opens in the interpreter's library, ``harness/server.py``'s ``ImportWatch``).
    ``complete`` is false when opens were lost (the kernel's queue overflowed, the record was malformed): then
    the absence of a module proves nothing."""

    modules: tuple[str, ...]
    complete: bool


@dataclass(frozen=True)
class SuiteRun:
    outcomes: tuple[TestOutcome, ...]
    tampered: bool = False
    tamper_reasons: tuple[str, ...] = ()
    error: str | None = None  # a suite-level problem: import error, whole-run timeout, dead harness
    stdout: str = ""
    stderr: str = ""
    duration_s: float = 0.0
    loaded: Loaded | None = None  # what the code loaded, seen from outside; None where nothing recorded it

    @property
    def passed(self) -> int:
        return sum(1 for o in self.outcomes if o.status == "passed")

    @property
    def failed(self) -> int:
        return self.total - self.passed

    @property
    def total(self) -> int:
        return len(self.outcomes)

    @property
    def tamper_reason(self) -> str:
        return "; ".join(self.tamper_reasons)


@dataclass(frozen=True)
class Observed:
    """One driver run: what it recorded (canonical JSON data), or why it recorded nothing."""

    name: str
    status: ObservedStatus  # "observed": the runner reported; otherwise the monitor's finding
    observations: tuple[Any, ...] = ()
    reason: str = ""
    duration_s: float = 0.0  # wall time measured by the harness server, outside the runner
    cpu_s: float | None = None  # CPU time of the code's process, read by the server from the kernel


Clock = Literal["cpu", "wall"]
CLOCKS: dict[str, str] = {"cpu": "CPU time, read from the kernel", "wall": "wall time"}


@dataclass(frozen=True)
class TimeBound:
    """A hidden test's declared time bounds (``@within``) and the clock they are read on: ``cpu`` where the
    bound is about work (the code's process's CPU time, which a loaded machine does not stretch), ``wall``
    only where waiting is the point (a timeout)."""

    min_s: float | None
    max_s: float | None
    clock: Clock


@dataclass(frozen=True)
class Watch:
    """What an observe run plants in the code's process (``env``: names and values added to its environment)
    and the request to watch, from outside that process, what the code sends out of it (``Egress``)."""

    env: tuple[tuple[str, str], ...]


WrittenKind = Literal["file", "dir", "device", "other", "gone"]


@dataclass(frozen=True)
class Written:
    """A path the code's processes created, wrote or moved in during the run: what it was when the run ended
    (``gone``: removed by then) and, for a file, what it held: its first 64 KiB and, past that, its last 64 KiB."""

    path: str
    kind: WrittenKind
    head: bytes = b""
    tail: bytes = b""


@dataclass(frozen=True)
class Reached:
    """One step of a connection the code tried, seen by the harness server (``harness/egress.py``): ``socket``
    (an internet socket made, ``data`` what the code sent over it), ``connect``, or an addressed ``sendto`` or
    ``sendmsg`` (``data`` what it carried). ``address`` is ``host:port``; None with ``hidden`` when the process
    hid its memory from the server."""

    call: str
    address: str | None = None
    hidden: bool = False
    data: bytes = b""


@dataclass(frozen=True)
class Egress:
    """What the code sent out of its processes during a watched run: the files written (``folder`` is its own
    working folder; anything else is outside it) and its connection attempts. ``complete`` is false when part
    of the record was lost (the kernel's queue overflowed, the watch could not be set up): then the absence of
    a write or a connection proves nothing."""

    folder: str
    written: tuple[Written, ...]
    reached: tuple[Reached, ...]
    complete: bool
    problem: str = ""  # what lost part of the record, where the server knows

    def outside(self) -> tuple[Written, ...]:
        """What was written outside the code's working folder (but device nodes such as ``/dev/null``, which
        anyone may write and no process in a box can make)."""
        return tuple(w for w in self.written if w.kind != "device"
                     and (not self.folder or (w.path != self.folder and not w.path.startswith(self.folder + "/"))))


@dataclass(frozen=True)
class ObservedSuite:
    tests: tuple[Observed, ...]
    tamper_reasons: tuple[str, ...] = ()
    error: str | None = None  # a suite-level problem: import error, whole-run timeout, dead harness
    stdout: str = ""
    stderr: str = ""
    duration_s: float = 0.0
    loaded: Loaded | None = None  # what the code loaded, seen from outside; None where nothing recorded it
    egress: Egress | None = None  # what the code sent out of its processes, when the run was watched (``Watch``)


@dataclass(frozen=True)
class ScriptRun:
    exit_code: int | None  # None when killed by the wall clock
    stdout: str
    stderr: str
    timed_out: bool
    duration_s: float
    signal: int | None = None  # the signal that ended it, if any
    truncated: bool = False


class Sandbox(Protocol):
    """One open sandbox serves many runs."""

    @property
    def backend(self) -> Backend: ...

    @property
    def image_id(self) -> str: ...

    def run_suite(
        self,
        solution: str,
        tests: Mapping[str, str],
        timeout_s: float = 30.0,
        on_output: OutputSink | None = None,
        interface: Collection[str] | None = None,
        setting: Setting | None = None,
    ) -> SuiteRun:
        """The purple agent's ``tests`` against ``solution``, which they reach only over the wire; ``interface``:
        the only names of the module they may read (``scoring.testing.task_interface``), else its public ones;
        ``setting``: how the code's process starts (``setting.py``; None: the classic start)."""
        ...

    def observe_suite(
        self,
        solution: str,
        drivers: Mapping[str, str],
        timeout_s: float = 60.0,
        on_output: OutputSink | None = None,
        seed: int = 0,
        only: Collection[str] | None = None,
        setting: Setting | None = None,
        watch: Watch | None = None,
    ) -> ObservedSuite:
        """The drivers' observations of ``solution``; ``seed`` seeds their drawn inputs (``observe.drawn``);
        ``only``: just these tests; ``setting``: how the code's process starts; ``watch``: plant its ``env`` in
        the code's process and record what the code sends out (``ObservedSuite.egress``)."""
        ...

    def run_script(self, files: Mapping[str, str], script: str, timeout_s: float = 10.0) -> ScriptRun: ...

    def close(self) -> None: ...

    def __enter__(self) -> Sandbox: ...

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None: ...
