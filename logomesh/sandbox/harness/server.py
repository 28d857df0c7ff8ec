"""The harness server: one per sandbox, serving many runs. Stdlib only.

Runs INSIDE the sandbox as ``python3 -I -S -c <this source> <config json>``
(the config carries the limits and the sources of ``runner.py``, ``driver.py``,
``answerer.py``, ``wire.py`` and ``observe.py``). It reads one JSON request per line on stdin and answers
on stdout with JSON lines: ``{"ev": "ready"}`` once, ``{"ev": "out", ...}``
while a run prints, and ``{"ev": "done", "id": ..., "result": {...}}`` at the
end of each run. Requests:

* ``observe``: a hidden suite of drivers, run by ``driver.py`` in a process
  of its own against the submission in another (``answerer.py``), whose
  observations go back to the host to be judged there;
* ``suite``: the purple agent's own tests, run by ``runner.py`` in the
  answerer beside the code they import; the driver asks for each test and
  records what the answerer said of it.

  For both, per run the server
  starts the driver (given the result pipe and one end of a control
  socketpair), waits for its ``ready`` (it is non-dumpable from then on),
  and only then starts the answerer with the other end (then tells the
  driver its pid, so the driver can measure it through ``/proc``): the code's
  process never holds a descriptor the host reads;
* ``script``: one script (red-agent probes), its exit status and output.

Untrusted code only ever runs in children (fork + exec of python3) whose
stdin is /dev/null and whose stdout/stderr are pipes read here, capped. The
server makes itself non-dumpable so those children (same uid) can neither
ptrace it nor open its /proc fds to write to the host channel; it is PID 1 in
Docker, which its children cannot kill. It also measures each test's wall
time, from outside the process under test. After each run every other
process in the sandbox is killed and the run's directory, whose name the
runs cannot predict, is removed.
"""

from __future__ import annotations

import contextlib
import json
import marshal
import os
import resource
import selectors
import shutil
import signal
import socket
import stat
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

CODE_KEYS = ("source", "interface")  # what only the code's process of a suite run gets, never the tests' process
RESULT_CAP = 1 << 20  # bytes one test may put on the result channel before it counts as a flood
MAX_DEPTH = 200  # observations nest at most this deep (observe.py stops at 64); deeper is malformed
# Memory is bounded by RLIMIT_DATA (what a process writes: heap, the used part of malloc's arenas, thread stacks).
# glibc reserves 64 MiB of address space for each thread's arena, so an address-space bound tight enough to bound
# memory fails threaded code, and the ways around that (MALLOC_ARENA_MAX, mallopt through ctypes) are marks in the
# code's environment or process. The address space keeps a ceiling, with room for an arena and a stack per
# thread, for the shared mappings RLIMIT_DATA does not count (a cgroup, where there is one, counts them too).
THREAD_ADDRESS_BYTES = (64 + 8) << 20
# How the driver and the answerer start: neutral lines that read a config on stdin and run its ``program`` in a
# namespace of its own, so that the process looks like a plain program with a ``main`` (see answerer.py).
BOOT = """def main():
    import json, marshal, os
    data = b""
    while not data.endswith(b"\\n"):  # nothing follows the config until the driver has answered
        chunk = os.read(0, 1 << 20)
        if not chunk:
            os._exit(3)
        data += chunk
    config = json.loads(data)
    namespace = {"__name__": "program", "__builtins__": __builtins__}
    exec(marshal.loads(bytes.fromhex(config.pop("program"))), namespace)
    namespace["run"](config)
main()
"""
SIGNAL_NAMES = {9: "SIGKILL (memory or process limit?)", 11: "SIGSEGV", 6: "SIGABRT", 25: "SIGXFSZ (file too big)",
                24: "SIGXCPU"}


def compiled(source: str, filename: str) -> str:
    """``source`` compiled once by this server, as the hex of its ``marshal`` form: every driver and answerer it
    starts loads the same code object instead of compiling the source again (the wire took 20 ms a process
    in a half-CPU box, twice on the way to every run's first call). Made by this interpreter, for the same
    interpreter, so the format always matches."""
    return marshal.dumps(compile(source, filename, "exec", dont_inherit=True)).hex()


def parse_record(line: bytes | None) -> dict[str, Any] | None:
    """A JSON object from one line, or None (nesting too deep to parse included)."""
    try:
        value = json.loads(line or b"")
    except (ValueError, UnicodeDecodeError, RecursionError):
        return None
    return value if isinstance(value, dict) else None


def shallow(value: Any, limit: int = MAX_DEPTH) -> bool:
    """True when ``value`` nests no deeper than ``limit`` (checked without recursion)."""
    stack = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if depth > limit:
            return False
        if isinstance(item, list):
            stack.extend((v, depth + 1) for v in item)
        elif isinstance(item, dict):
            stack.extend((v, depth + 1) for v in item.values())
    return True


def tamper_in(record: dict[str, Any]) -> list[str]:
    """The tamper reasons in a verdict of the purple's own tests (what ``runner.py``, beside the code, answered; the
    driver passes on a list of strings). Anything else (missing, a string, a number) is itself tampering, never
    "none"."""
    found = record.get("tamper")
    if isinstance(found, list) and all(isinstance(r, str) for r in found):
        return [r[:300] for r in found]
    return ["malformed tamper list in a result record"]


def libc() -> Any:
    """The C library, for the calls Python does not wrap; None where it cannot be loaded."""
    try:
        import ctypes

        return ctypes.CDLL(None, use_errno=True)
    except Exception:
        return None


def prctl(option: int, value: int) -> None:
    with contextlib.suppress(Exception):
        libc().prctl(option, value, 0, 0, 0)


# inotify (``inotify(7)``): the mask bits read here, the flags of ``inotify_init1`` (the values of ``O_NONBLOCK``
# and ``O_CLOEXEC``); egress.py reads the events.
IN_OPEN, IN_Q_OVERFLOW, IN_ISDIR = 0x20, 0x4000, 0x40000000
EventReader = Callable[[int], tuple[list[tuple[int, int, bytes]], bool]]  # fd -> (wd, mask, name) events, clean
MODULE_SUFFIXES = ("py", "pyc", "so")  # X.py, __pycache__/X.cpython-313.pyc, X.cpython-313-x86_64-linux-gnu.so
PATH_ENTRIES = ("lib-dynload", "site-packages", "dist-packages")  # folders on sys.path inside the library's
MAX_LOADED = 2000  # module names one suite run reports; more is a lost record


def package_of(relative: str) -> str:
    """The dotted package a folder of the library holds modules of, from its path below a watched top
    (``json/__pycache__`` holds ``json``'s; ``dist-packages/_pytest`` ``_pytest``'s; ``lib-dynload`` the top's)."""
    parts = [p for p in relative.split("/") if p not in ("", ".")]
    for i in range(len(parts) - 1, -1, -1):
        if parts[i] in PATH_ENTRIES:
            parts = parts[i + 1:]
            break
    return ".".join(p for p in parts if p != "__pycache__")


def module_of(package: str, name: str) -> str | None:
    """The module a file of ``package``'s folder holds (``pickle.py``, ``pickle.cpython-313.pyc``,
    ``_pickle.cpython-313-x86_64-linux-gnu.so``, a package's ``__init__``); None for any other file."""
    stem, dot, _ = name.partition(".")
    if not dot or not stem.isidentifier() or name.rsplit(".", 1)[1] not in MODULE_SUFFIXES:
        return None
    if stem == "__init__":
        return package or None
    return f"{package}.{stem}" if package else stem


class ImportWatch:
    """The modules the code's processes load, seen from this server with inotify: every file opened in the
    interpreter's library (the standard library, lib-dynload, the dist-packages folders), named as a module.

    Nothing in the code's process keeps this record, so no spelling of an import (a computed name, a code object
    built with ``marshal``, a child ``python3 -c``, the source read and ``exec``ed) escapes it. Which opens are
    the code's: the judge's processes open the same files, but only before the code runs. So the watch is armed
    once the driver is ready (what is queued then is the judge's, and dropped), and counts from the first open of
    ``solution.py`` in the code's folder, by the answerer's import of it, until the pair is swept (``settle``).
    Watches are per directory inode: a box must have its own (Docker's overlay does; bubblewrap binds a farm of
    hard links per box, ``sandbox/bwrap.py``), or it would see every box's opens. A queue overflow loses opens:
    the record is then incomplete, never clean. Modules the interpreter loaded before the code (``os``,
    ``sys``, what the answerer's wire imports) and builtin ones (``math``, ``_socket``...) open nothing."""

    def __init__(self, calls: Any, fd: int, packages: dict[int, str], events: EventReader) -> None:
        self.calls = calls
        self.fd = fd
        self.events = events  # egress.py's ``inotify_events``: one reader of inotify's queue for both watches
        self.packages = packages  # watch descriptor -> the package its folder holds
        self.sentinel = -1  # the watch of the code's folder, until its solution.py is opened
        self.counting = False
        self.loaded: set[str] = set()
        self.lost = False

    @classmethod
    def open(cls, tops: list[str], events: EventReader) -> ImportWatch | None:
        """A watch of every folder below ``tops``; None where inotify cannot be had (no C library, no watch)."""
        calls = libc()
        if calls is None:
            return None
        fd = int(calls.inotify_init1(os.O_NONBLOCK | os.O_CLOEXEC))
        if fd < 0:
            return None
        packages: dict[int, str] = {}
        for top in tops:
            for folder, _, _ in os.walk(top):
                wd = int(calls.inotify_add_watch(fd, os.fsencode(folder), IN_OPEN))
                if wd < 0:
                    os.close(fd)
                    return None
                packages[wd] = package_of(os.path.relpath(folder, top))
        if not packages:
            os.close(fd)
            return None
        return cls(calls, fd, packages, events)

    def arm(self, folder: str) -> None:
        """Before the code's process starts: drop what is queued (the judge's opens) and watch ``folder`` for the
        import of ``solution.py``, from which every open is the code's."""
        self.counting = False
        self.drain()
        self.sentinel = int(self.calls.inotify_add_watch(self.fd, os.fsencode(folder), IN_OPEN))
        if self.sentinel < 0:
            self.lost = True

    def settle(self) -> None:
        """After the pair is swept (every open of its processes is queued by then): read the rest, stop counting."""
        self.drain()
        self.counting = False
        self.unwatch_sentinel()

    def unwatch_sentinel(self) -> None:
        if self.sentinel >= 0:
            self.calls.inotify_rm_watch(self.fd, self.sentinel)
            self.sentinel = -1

    def drain(self) -> None:
        """Read every queued event."""
        events, clean = self.events(self.fd)
        self.lost = self.lost or not clean
        for wd, mask, name in events:
            self.event(wd, mask, name)

    def event(self, wd: int, mask: int, name: bytes) -> None:
        if mask & IN_Q_OVERFLOW:
            self.lost = self.lost or self.counting or self.sentinel >= 0
        elif mask & IN_ISDIR or not mask & IN_OPEN:
            return
        elif wd == self.sentinel:
            if name == b"solution.py":
                self.counting = True
                self.unwatch_sentinel()  # the code's own folder is not the library
        elif self.counting and wd in self.packages:
            module = module_of(self.packages[wd], os.fsdecode(name))
            if module is not None:
                self.loaded.add(module)

    def record(self) -> dict[str, Any]:
        """What one suite run's pairs loaded, for its result; ``complete`` is false when opens were lost."""
        modules = sorted(self.loaded)
        return {"modules": modules[:MAX_LOADED], "complete": not self.lost and len(modules) <= MAX_LOADED}

    def reset(self) -> None:
        self.loaded = set()
        self.lost = False


# Places every run in a box shares, besides the work folder and a setting's roots: what a run adds is removed after
# it (``/dev`` is writable in a bubblewrap box; its device nodes are there from the start and stay).
SCRATCH = ("/tmp", "/dev", "/dev/shm", "/dev/mqueue")
# The System V IPC objects of the box's IPC namespace (``/proc/sysvipc``), which outlive the process that made
# them: each kind's listing and how one is removed (``IPC_RMID`` is 0).
SYSV_IPC = (("shm", "shmctl", (0, None)), ("sem", "semctl", (0, 0)), ("msg", "msgctl", (0, None)))


def remove_sysv_ipc() -> None:
    """Remove every System V shared memory segment, semaphore set and message queue this uid may remove: each
    outlives the process that made it. (The kernel keyrings, which do too, are refused in every box: Docker's
    seccomp profile, ``logomesh/sandbox/seccomp.py`` for bubblewrap.)"""
    calls = libc()
    if calls is None:
        return
    for kind, call, args in SYSV_IPC:
        try:
            with open(f"/proc/sysvipc/{kind}") as handle:
                ids = [int(line.split()[1]) for line in handle.readlines()[1:] if len(line.split()) > 1]
        except (OSError, ValueError):
            continue
        for ipc_id in ids:
            getattr(calls, call)(ipc_id, *args)


def ignore_signals(ignore: bool) -> None:
    """Every signal a process can ignore, ignored (``ignore``) or back to its default action.

    The judge's processes (this server, each driver) run beside the code under the same uid, so the code may
    send them any signal: each must change nothing (SIGKILL and SIGSTOP cannot be ignored; ``JudgeGuard`` sees
    them). An ignored signal stays ignored across exec, and Python keeps an ignored SIGINT, so a driver starts
    deaf; the code's processes get the defaults an ordinary program starts with. SIGCHLD keeps its default,
    which ``waitpid`` needs."""
    for sig in signal.valid_signals():
        if sig not in (signal.SIGKILL, signal.SIGSTOP, signal.SIGCHLD):
            with contextlib.suppress(OSError, ValueError):
                signal.signal(sig, signal.SIG_IGN if ignore else signal.SIG_DFL)


def stat_fields(pid: int) -> list[str] | None:
    """The fields of ``/proc/<pid>/stat`` after the command name, the state letter first (``[0]``; the parent's
    pid ``[1]``); None once ``pid`` is gone. Read as bytes, up to the last ``)``: the name, which a process sets
    for itself, may hold spaces, parentheses and bytes that are not text."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            return handle.read().rsplit(b")", 1)[1].decode("ascii").split()
    except (OSError, IndexError, UnicodeDecodeError):
        return None


def outside_view(pid: int) -> str | None:
    """How the kernel runs ``pid``, as far as another process of its uid could change it: its limits, nice value,
    scheduling policy and allowed CPUs; None once it is gone."""
    try:
        with open(f"/proc/{pid}/limits", "rb") as handle:
            limits = handle.read()
        fields = stat_fields(pid)
        with open(f"/proc/{pid}/status", "rb") as handle:  # bytes: its Name line is whatever the process set
            cpus = [line for line in handle if line.startswith(b"Cpus_allowed_list")]
    except OSError:
        return None
    if fields is None:
        return None
    return f"{limits!r} nice {fields[16]} policy {fields[38]} {b''.join(cpus)!r}"


class JudgeGuard:
    """Watches the judge's driver from the server: what the code, the one other process of its uid, did to it.

    The driver is non-dumpable (no ptrace, no ``/proc`` fds) and ignores every signal it can, but the kernel
    still lets a process of the same uid kill or stop it and lower its limits (``prlimit``), its priority or
    its CPUs. Nothing else in the box does: this server ends it only after reading its last record, the
    driver has no CPU limit of its own, and it is the last choice of the out-of-memory killer. So each of those
    is the code's doing, reported as tampering (every hidden test fails; a probe's run is a critical finding)."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.view = outside_view(pid)

    def interference(self, ended: bool) -> str | None:
        """What was done to the driver, or None. ``ended``: its channel closed, so it is exiting (its end is
        waited for briefly, and never reaped here: ``end_all`` reaps)."""
        for _ in range(200 if ended else 1):
            try:
                info = os.waitid(os.P_PID, self.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
            except ChildProcessError:
                return None
            if info is not None:
                if info.si_code in (os.CLD_KILLED, os.CLD_DUMPED):
                    return f"killed the judge's driver (signal {info.si_status})"
                return None
            if proc_state(self.pid) in ("T", "t"):
                return "stopped the judge's driver (SIGSTOP)"
            if outside_view(self.pid) != self.view:
                return "changed the judge's driver's limits or scheduling"
            if ended:
                time.sleep(0.005)
        return None


def proc_state(pid: int) -> str:
    """The state letter of ``pid`` in ``/proc/<pid>/stat`` ("" once it is gone)."""
    fields = stat_fields(pid)
    return fields[0] if fields else ""


def describe_end(code: int | None, sig: int | None) -> str:
    if sig is not None:
        return f"killed by signal {sig} {SIGNAL_NAMES.get(sig, '')}".strip()
    return f"exited with status {code}"


def safe_name(name: object) -> bool:
    return isinstance(name, str) and bool(name) and "/" not in name and "\0" not in name and name not in (".", "..")


def write_files(folder: str, files: dict[str, str]) -> None:
    os.makedirs(folder, exist_ok=True)
    for name, text in files.items():
        if not safe_name(name):
            raise ValueError(f"bad file name {name!r}")
        with open(os.path.join(folder, name), "w", encoding="utf-8") as handle:
            handle.write(text)


def remove_tree(path: str) -> None:
    """Remove ``path`` (a file, a link or a folder the code may have made unwritable), never following links."""
    if os.path.islink(path) or not os.path.isdir(path):
        with contextlib.suppress(OSError):
            os.unlink(path)
        return
    for root, dirs, _ in os.walk(path):
        for d in dirs:
            with contextlib.suppress(OSError):
                os.chmod(os.path.join(root, d), 0o700)
    shutil.rmtree(path, ignore_errors=True)


# What a run could change of a place it may not remove (a kept folder, or an entry there from the box's start):
# mode, access and modification times in ns, and its extended attributes.
Stamp = tuple[int, int, int, tuple[tuple[str, bytes], ...]]


def stamp_of(path: str) -> Stamp | None:
    """``path``'s mode, times and extended attributes (never following a link); None where it cannot be read."""
    try:
        info = os.lstat(path)
        names = sorted(os.listxattr(path, follow_symlinks=False))
        attributes = tuple((n, os.getxattr(path, n, follow_symlinks=False)) for n in names)
    except OSError:
        return None
    return info.st_mode, info.st_atime_ns, info.st_mtime_ns, attributes


def restamp(path: str, stamp: Stamp) -> None:
    """Put ``path``'s mode, extended attributes and times back as ``stamp`` has them: a run that changed one (or
    ``clear_places``, removing what the run added) left a mark the next run could read. The times go last: the
    other changes move only the inode's change time, which therefore always moves, whatever the run did."""
    mode, atime_ns, mtime_ns, attributes = stamp
    current = stamp_of(path)
    now = dict(current[3]) if current else {}
    with contextlib.suppress(OSError):
        for name in now.keys() - dict(attributes).keys():
            os.removexattr(path, name, follow_symlinks=False)
        for name, value in attributes:
            if now.get(name) != value:
                os.setxattr(path, name, value, follow_symlinks=False)
    if not stat.S_ISLNK(mode):
        with contextlib.suppress(OSError):
            os.chmod(path, stat.S_IMODE(mode))
    with contextlib.suppress(OSError, NotImplementedError):
        os.utime(path, ns=(atime_ns, mtime_ns), follow_symlinks=False)


def listing(folder: str) -> list[str]:
    """The names in ``folder``; none when it is missing or unreadable."""
    try:
        return os.listdir(folder)
    except OSError:
        return []


def write_all(fd: int, data: bytes) -> None:
    while data:
        data = data[os.write(fd, data):]


def kill_group(pid: int) -> None:
    with contextlib.suppress(OSError):
        os.killpg(pid, signal.SIGKILL)


def end_all(pids: list[int]) -> str:
    """Kill and reap every process of a run (driver, answerer; or a script); how the last one we can reap ended
    (the code's process, or the shell that started it and reaped it: ``shell_child``)."""
    ends = []
    for pid in pids:
        kill_group(pid)
        ends.append(reap(pid))
    known = [describe_end(*end) for end in ends if end != (None, None)]
    return known[-1] if known else "never started"


def shell_child(pid: int, deadline: float) -> int | None:
    """The one child of the shell ``pid`` (``sh -c "python3 app.py"``): the code's process, read from the kernel
    (``/proc/<pid>/task/<pid>/children``), or ``pid`` itself if the shell ran it in its own place (exec); None
    if the shell ended first."""
    while time.monotonic() < deadline:
        try:
            with open(f"/proc/{pid}/task/{pid}/children") as handle:
                children = handle.read().split()
            exe = os.readlink(f"/proc/{pid}/exe")
        except OSError:
            return None
        if children:
            return int(children[0])
        if "python" in os.path.basename(exe):
            return pid
        time.sleep(0.0005)
    return None


def reap(pid: int) -> tuple[int | None, int | None]:
    """Wait for ``pid``; return (exit_code, signal)."""
    try:
        _, status = os.waitpid(pid, 0)
    except ChildProcessError:
        return None, None
    if os.WIFSIGNALED(status):
        return None, os.WTERMSIG(status)
    return os.WEXITSTATUS(status), None


def ancestors() -> set[int]:
    """Our pid and our ancestors': the processes a sweep must spare."""
    keep = {1}
    pid = os.getpid()
    while pid > 1:
        keep.add(pid)
        try:
            pid = int((stat_fields(pid) or [])[1])
        except (ValueError, IndexError):
            break
    return keep


def sweep(keep_alive: set[int]) -> None:
    """Kill every process in the sandbox but us and our ancestors; reap what we can."""
    for _ in range(200):
        alive = 0
        for entry in os.listdir("/proc"):
            if not entry.isdigit() or int(entry) in keep_alive:
                continue
            if proc_state(int(entry)) in ("", "Z", "X"):
                continue
            alive += 1
            with contextlib.suppress(OSError):
                os.kill(int(entry), signal.SIGKILL)
        while True:
            try:
                pid, _ = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                break
            if pid == 0:
                break
        if not alive:
            return
        time.sleep(0.005)


class Channel:
    """Writes JSON lines to the host on our stdout."""

    def __init__(self, fd: int) -> None:
        self.fd = fd

    def send(self, record: dict[str, Any]) -> None:
        write_all(self.fd, (json.dumps(record) + "\n").encode())


class Output:
    """Capped capture of one run's stdout/stderr.

    The first half of the cap is kept and forwarded to the host line by line
    as it arrives; past it only a rolling tail is kept (so a final result
    line survives a flood), and everything between is dropped and counted.
    """

    marker_room = 100

    def __init__(self, channel: Channel, run_id: Any, cap: int) -> None:
        self.channel = channel
        self.run_id = run_id
        self.head_cap = cap // 2
        self.tail_cap = cap - self.head_cap - self.marker_room
        self.kept: dict[str, list[str]] = {"stdout": [], "stderr": []}
        self.size = {"stdout": 0, "stderr": 0}
        self.pending = {"stdout": b"", "stderr": b""}
        self.tail = {"stdout": b"", "stderr": b""}
        self.dropped = {"stdout": 0, "stderr": 0}
        self.truncated = False
        self.origin = "suite"

    def set_origin(self, origin: str) -> None:
        self.flush()
        self.origin = origin

    def feed(self, stream: str, data: bytes) -> None:
        room = self.head_cap - self.size[stream]
        if room > 0:
            head, data = data[:room], data[room:]
            self.size[stream] += len(head)
            self.feed_head(stream, head)
        if data:
            self.truncated = True
            tail = self.tail[stream] + data
            if len(tail) > self.tail_cap:
                self.dropped[stream] += len(tail) - self.tail_cap
                tail = tail[-self.tail_cap:]
            self.tail[stream] = tail

    def feed_head(self, stream: str, data: bytes) -> None:
        pending = self.pending[stream] + data
        if len(pending) > 8192 or self.size[stream] >= self.head_cap:
            self.pending[stream] = b""
            self.forward(stream, pending)
        elif b"\n" in pending:
            head, _, rest = pending.rpartition(b"\n")
            self.pending[stream] = rest
            self.forward(stream, head + b"\n")
        else:
            self.pending[stream] = pending

    def forward(self, stream: str, data: bytes) -> None:
        text = data.decode("utf-8", errors="replace")
        self.kept[stream].append(text)
        self.channel.send({"ev": "out", "id": self.run_id, "origin": self.origin, "stream": stream, "text": text})

    def flush(self) -> None:
        for stream, pending in self.pending.items():
            if pending:
                self.pending[stream] = b""
                self.forward(stream, pending)

    def text(self, stream: str) -> str:
        self.flush()
        text = "".join(self.kept[stream])
        if self.dropped[stream]:
            text += f"\n[... {self.dropped[stream]} bytes dropped by the output cap ...]\n"
        return text + self.tail[stream].decode("utf-8", errors="replace")


class Pipes:
    """The pipes of one child: its stdout and stderr (to ``Output``) and, for a driver, its result channel."""

    def __init__(self, output: Output, out_r: int, err_r: int, res_r: int | None = None) -> None:
        self.output = output
        self.sel = selectors.DefaultSelector()
        self.sel.register(out_r, selectors.EVENT_READ, "stdout")
        self.sel.register(err_r, selectors.EVENT_READ, "stderr")
        self.res_r = res_r
        self.results = b""
        self.fds = [out_r, err_r]
        if res_r is not None:
            self.sel.register(res_r, selectors.EVENT_READ, "res")
            self.fds.append(res_r)

    def add_output(self, out_r: int, err_r: int) -> None:
        """Read a second child's stdout and stderr too (the answerer's, beside the driver's)."""
        self.sel.register(out_r, selectors.EVENT_READ, "stdout")
        self.sel.register(err_r, selectors.EVENT_READ, "stderr")
        self.fds += [out_r, err_r]

    def pump(self, deadline: float, want_line: bool, exited: Callable[[], bool] | None = None) -> tuple[str, bytes]:
        """Read until a complete result line (``want_line``), all pipes close, the child exits, or the deadline.

        Returns ``("line", bytes)``, ``("eof" | "timeout" | "exited" | "flood", b"")``.
        """
        while True:
            if want_line and b"\n" in self.results:
                line, self.results = self.results.split(b"\n", 1)
                return "line", line
            if not self.sel.get_map():
                return "eof", b""
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return "timeout", b""
            if exited is not None and exited():
                return "exited", b""
            for key, _ in self.sel.select(min(remaining, 1.0 if exited is None else 0.05)):
                try:
                    data = os.read(key.fd, 65536)
                except OSError:
                    data = b""
                if not data:
                    self.sel.unregister(key.fd)
                    if key.data == "res" and want_line:
                        return "eof", b""
                    continue
                if key.data == "res":
                    self.results += data
                    if len(self.results) > RESULT_CAP:
                        return "flood", b""
                else:
                    self.output.feed(key.data, data)

    def drain_ready(self) -> None:
        """Read whatever output is already waiting, without blocking."""
        for _ in range(64):
            progressed = False
            for key, _ in self.sel.select(0):
                if key.data == "res":
                    continue
                try:
                    data = os.read(key.fd, 65536)
                except OSError:
                    data = b""
                if data:
                    self.output.feed(key.data, data)
                    progressed = True
            if not progressed:
                return

    def drain(self) -> None:
        """Read what is left in the output pipes without waiting on live writers."""
        end = time.monotonic() + 0.2
        while self.sel.get_map() and time.monotonic() < end:
            events = self.sel.select(0.02)
            if not events:
                break
            for key, _ in events:
                try:
                    data = os.read(key.fd, 65536)
                except OSError:
                    data = b""
                if not data:
                    self.sel.unregister(key.fd)
                elif key.data != "res":
                    self.output.feed(key.data, data)

    def close(self, *more_fds: int) -> None:
        for key in list(self.sel.get_map().values()):
            self.sel.unregister(key.fd)
        self.sel.close()
        for fd in [*self.fds, *more_fds]:
            if fd >= 0:
                with contextlib.suppress(OSError):
                    os.close(fd)


CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float | None:
    """CPU seconds process ``pid`` has used, all its threads and the children it has reaped, as the kernel
    counts them (``/proc/<pid>/stat``: utime, stime, cutime, cstime); None once it is gone. Read from here,
    outside the process, so nothing the code does to its own clocks changes it."""
    fields = stat_fields(pid)
    if fields is None:
        return None
    try:
        return sum(int(f) for f in fields[11:15]) / CLOCK_TICKS
    except ValueError:
        return None


FLAGS = frozenset({"-B", "-u", "-s", "-E", "-I", "-S"})  # interpreter flags a setting may give (never -O)


@dataclass(frozen=True)
class CodeStart:
    """How a run starts the code's process: its folder (its working folder, where ``solution.py`` is when the
    code is a file), its argv and its environment (None: the classic one, ``Server.spawn``)."""

    folder: str
    argv: list[str]
    env: dict[str, str] | None = None
    shell: bool = False  # argv is ``sh -c``, whose one child is the code's process
    ancestor: str = ""  # what this server's command line reads while the code runs ("": its own)
    sibling: str = ""  # what the judge's driver's reads ("": its own)


@dataclass
class SuiteState:
    """What one suite run has found so far."""

    names: list[str]
    outcomes: list[dict[str, Any] | None]
    tamper: list[str] = field(default_factory=list)
    error: str | None = None

    def note_tamper(self, reasons: list[str]) -> None:
        for reason in reasons:
            if reason not in self.tamper:
                self.tamper.append(reason)

    def note_import(self, record: dict[str, Any], suite: bool) -> None:
        """The pair's ``imported`` record: the modules that failed to import (the suite's error) and, for the
        purple's own tests, the tampering the code's process admitted."""
        if suite:
            self.note_tamper(tamper_in(record))
        import_errors = record.get("errors")
        if not isinstance(import_errors, dict):
            self.note_tamper(["malformed import errors in a result record"])
        elif import_errors and self.error is None:
            listed = "; ".join(f"{m}: {r}" for m, r in sorted(import_errors.items()))
            self.error = ("import failed: " + listed)[:500]

    def set(self, index: int, status: str, reason: str, elapsed: float, obs: Any = None,
            cpu_s: float | None = None) -> None:
        outcome: dict[str, Any] = {"name": self.names[index], "status": status, "reason": reason[:500],
                                   "duration_s": round(elapsed, 6)}
        if cpu_s is not None:
            outcome["cpu_s"] = round(cpu_s, 6)
        if obs is not None:
            outcome["obs"] = obs
        self.outcomes[index] = outcome


@dataclass
class Watching:
    """One observe run's watch of what the code sends out of its processes (``egress.py``): the environment its
    process gets (the planted canary), the seccomp filter it starts under, and the two records."""

    env: dict[str, str]
    program: bytes
    supervisor: Any
    writes: Any = None
    lost: bool = False
    why: str = ""  # what lost the watch of connections

    @classmethod
    def of(cls, request: dict[str, Any], egress: dict[str, Any]) -> Watching:
        env, program, calls = request.get("env"), request.get("filter"), request.get("calls")
        if not (isinstance(env, dict) and all(safe_name(k) and "=" not in k and isinstance(v, str) and "\0" not in v
                                              for k, v in env.items())
                and isinstance(program, str) and isinstance(calls, dict)):
            raise ValueError("bad watch")
        return cls(dict(env), bytes.fromhex(program), egress["Supervisor"](calls))

    def arm(self, egress: dict[str, Any], places: list[str]) -> None:
        """Before the first code's process starts: watch every place it may write."""
        if self.writes is None:
            self.writes = egress["WriteWatch"](places, [p for p in places if p != "/dev"])

    def adopt(self, egress: dict[str, Any], hand: tuple[socket.socket, socket.socket]) -> None:
        """Take the listener the child just made, sent up ``hand``."""
        hand[1].close()
        try:
            listener = egress["adopt"](hand[0])
            if listener >= 0:
                self.supervisor.watch(listener)
            else:
                self.lost = True
                self.why = f"no listener: errno {-listener}"
        except OSError as exc:
            self.lost = True
            self.why = f"no listener: {exc}"
        finally:
            hand[0].close()

    def record(self, folder: str) -> dict[str, Any]:
        """The run's record: the code's working folder, what was written, the connections."""
        writes = self.writes.record() if self.writes is not None else {"files": [], "complete": False}
        sockets = self.supervisor.finish()
        sockets["complete"] = sockets["complete"] and not self.lost
        return {"folder": folder, "writes": writes, "sockets": sockets, "why": self.why}


class Server:
    def __init__(self, config: dict[str, Any]) -> None:
        self.limits: dict[str, Any] = config["limits"]
        self.runner_source = str(config["runner"])
        self.sources = {name: str(config[name])
                        for name in ("driver", "answerer", "wire", "observe", "title", "egress")}
        self.compiled = {name: compiled(self.sources[name], filename)
                         for name, filename in (("driver", "program"), ("answerer", "program"), ("wire", "wire"))}
        self.work_root = str(config["work"])
        self.roots = tuple(str(r) for r in config.get("roots", ()))  # where an ordinary setting's folder may be
        self.shared = {place: frozenset(listing(place)) for place in (self.work_root, *SCRATCH)}  # as they start
        self.stamps = {path: found for path in self.kept_paths() if (found := stamp_of(path)) is not None}
        self.python = sys.executable or "/usr/bin/python3"
        self.out_cap = int(self.limits["output_bytes"])
        self.channel = Channel(sys.stdout.fileno())
        self.keep_alive = ancestors()
        self.view = outside_view(os.getpid())
        self.degraded: str | None = None  # set once a run changed how the kernel runs this server
        title: dict[str, Any] = {"__name__": "title"}
        exec(compile(self.sources["title"], "title", "exec", dont_inherit=True), title)
        self.egress: dict[str, Any] = {"__name__": "egress"}
        exec(compile(self.sources["egress"], "egress", "exec", dont_inherit=True), self.egress)
        self.imports = ImportWatch.open([str(top) for top in config.get("library", ())], self.egress["inotify_events"])
        self.watching: Watching | None = None  # the run's watch of the code's writes and connections, if asked
        memory = title["own_memory"]()  # opened now: main() makes us non-dumpable next
        self.retitle: Callable[[bytes], bool] = lambda name: bool(title["retitle"](name, memory))
        self.retitled = False  # a run showed a setting's command line: restore ours when it ends (handle)
        with open("/proc/self/cmdline", "rb") as handle:
            self.title = handle.read()  # our command line, restored after a run that showed a setting's

    def changed(self) -> str | None:
        """What a run did to this server, seen through its own ``/proc`` entry: its limits, priority or CPUs
        (``prlimit`` and ``setpriority`` by the code, same uid). The server cannot undo it (the hard limits only
        go down), so it judges nothing more: that run and every later one in this box report it as tampering.
        A box serves one submission (and the task's reference, run first)."""
        return None if outside_view(os.getpid()) == self.view else "changed the judge's server's limits or scheduling"

    def refuse_suite(self, request: dict[str, Any]) -> dict[str, Any]:
        """The result of a suite this server no longer runs (``degraded``): every test an error, tampered."""
        reason = f"not run: an earlier run {self.degraded}"
        outcomes = [{"name": str(n), "status": "error", "reason": reason, "duration_s": 0.0}
                    for n in request["names"]]
        return {"outcomes": outcomes, "tampered": True, "tamper": [str(self.degraded)], "error": reason,
                "stdout": "", "stderr": "", "truncated": False, "duration_s": 0.0, "restarts": 0}

    # ---- children -------------------------------------------------------------------------------

    def child_limits(self, judge: bool) -> None:
        """Runs in the child between fork and exec. ``judge``: the driver, which ignores signals, has no CPU limit
        of its own (its suite's wall clock bounds it) and is the out-of-memory killer's last choice."""
        os.setsid()
        ignore_signals(judge)
        try:
            with open("/proc/self/oom_score_adj", "w") as handle:
                handle.write("0" if judge else "1000")
        except OSError:
            pass
        limits = self.limits
        memory = int(limits["process_memory_bytes"])
        pairs = [
            (resource.RLIMIT_FSIZE, int(limits["file_bytes"])),
            (resource.RLIMIT_NOFILE, int(limits["open_files"])),
            (resource.RLIMIT_DATA, memory),
            (resource.RLIMIT_AS, memory + int(limits["pids"]) * THREAD_ADDRESS_BYTES),
            (resource.RLIMIT_CORE, 0),
        ]
        if not judge:
            pairs.append((resource.RLIMIT_CPU, int(limits["cpu_seconds"])))
        with contextlib.suppress(OSError):
            os.nice(int(limits["nice"]))
        nproc = limits.get("nproc")
        if nproc:
            pairs.append((resource.RLIMIT_NPROC, int(nproc)))
        for which, value in pairs:
            with contextlib.suppress(ValueError, OSError):
                resource.setrlimit(which, (value, value))

    def spawn(self, argv: list[str], cwd: str, pass_fds: tuple[int, ...] = (),
              stdin: int | None = None, judge: bool = False,
              env: dict[str, str] | None = None, watched: bool = False) -> tuple[int, int, int]:
        """A child running ``argv``; ``watched``: under the run's seccomp filter, its listener taken here
        (``egress.py``)."""
        out_r, out_w = os.pipe()
        err_r, err_w = os.pipe()
        devnull = os.open(os.devnull, os.O_RDONLY)
        watching = self.watching if watched else None
        hand = socket.socketpair() if watching is not None else None  # the filter's listener comes up it
        pid = os.fork()
        if pid == 0:  # child
            try:
                if watching is not None and hand is not None:
                    self.egress["hand_over"](hand[1], watching.program)
                os.dup2(devnull if stdin is None else stdin, 0)
                os.dup2(out_w, 1)
                os.dup2(err_w, 2)
                low = 3
                for fd in sorted(pass_fds):
                    os.closerange(low, fd)
                    low = fd + 1
                os.closerange(low, 65536)
                for fd in pass_fds:
                    os.set_inheritable(fd, True)
                os.chdir(cwd)
                self.child_limits(judge)
                if env is None:
                    env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": cwd, "LANG": "C.UTF-8",
                           "TMPDIR": cwd, "PYTHONDONTWRITEBYTECODE": "1"}
                if watching is not None:
                    env = {**env, **watching.env}
                os.execve(argv[0], argv, env)
            finally:
                os._exit(127)
        for fd in (out_w, err_w, devnull):
            os.close(fd)
        if watching is not None and hand is not None:
            watching.adopt(self.egress, hand)
        return pid, out_r, err_r

    # ---- settings -------------------------------------------------------------------------------

    def code_start(self, setting: Any, sol_dir: str) -> CodeStart:
        """The code's process's start for a run: the classic one (``python3 -I -S -u -c BOOT`` in ``sol_dir``)
        without a ``setting``, else the setting's (``logomesh/sandbox/setting.py`` on the host): its script, a
        file holding BOOT, run by name in its folder, under one of ``roots``, made fresh."""
        if setting is None:
            return CodeStart(sol_dir, [self.python, "-I", "-S", "-u", "-c", BOOT])
        if not isinstance(setting, dict):
            raise ValueError("bad setting")
        script, flags, env, folder = (setting.get(k) for k in ("script", "flags", "env", "folder"))
        titles = [str(setting.get(k, ""))[:200] for k in ("ancestor", "sibling")]
        if not (safe_name(script) and str(script).endswith(".py") and isinstance(flags, list)
                and all(f in FLAGS for f in flags) and isinstance(env, dict)
                and all(safe_name(k) and "=" not in k and isinstance(v, str) and "\0" not in v
                        for k, v in env.items())):
            raise ValueError("bad setting")
        root = self.root_of(folder)
        if root is None or not isinstance(folder, str) or folder == root:
            raise ValueError(f"bad setting folder {folder!r}")
        remove_tree(folder)
        os.makedirs(folder, 0o755)
        home = env.get("HOME", "")
        if self.root_of(home) not in (None, home):
            os.makedirs(home, 0o755, exist_ok=True)
        write_files(folder, {str(script): BOOT})
        command = " ".join(["python3", *flags, str(script)])
        return CodeStart(folder, ["/bin/sh", "-c", command], dict(env), True, *titles)

    def root_of(self, path: Any) -> str | None:
        """The root of ``roots`` that ``path`` (absolute, normalised) lies in, or None."""
        if not isinstance(path, str) or not path.startswith("/") or os.path.normpath(path) != path:
            return None
        return next((r for r in self.roots if path == r or path.startswith(r + "/")), None)

    def clear_places(self) -> None:
        """Remove whatever a run left for the next: everything in the roots a setting's folder may use, what was
        not there when the box started in the work folder and the scratch places, and the box's System V IPC
        objects; and put back the mode, times and extended attributes of what stays. A mark one run left (a file
        in ``/tmp``, or ``/tmp``'s own mode, written where the code saw the judge's classic start) would otherwise
        tell every later run it is judged."""
        kept = {root: frozenset[str]() for root in self.roots} | self.shared
        for path, found in self.stamps.items():  # first, so that a place the code made unreadable is listed
            restamp(path, found)
        for place, started in kept.items():
            for entry in listing(place):
                if entry not in started:
                    remove_tree(os.path.join(place, entry))
        for path, found in self.stamps.items():  # again: removing what the run added moved the times
            restamp(path, found)
        remove_sysv_ipc()

    def kept_paths(self) -> list[str]:
        """The places ``clear_places`` keeps, and what was in the shared ones when the box started: a run may
        change their mode, times or extended attributes, never remove them."""
        entries = [os.path.join(place, entry) for place, started in self.shared.items() for entry in started]
        return [*self.roots, *self.shared, *entries]

    # ---- suites ---------------------------------------------------------------------------------

    def run_suite(self, request: dict[str, Any], folder: str, mode: str) -> dict[str, Any]:
        """Run every named test in a driver and answerer pair (a fresh pair after a crash or a timeout); ``mode`` is
        suite or observe."""
        names = [str(n) for n in request["names"]]
        tests_dir = os.path.join(folder, "tests")
        sol_dir = os.path.join(folder, "sol")
        write_files(sol_dir, {})
        start = self.code_start(request.get("setting"), sol_dir)
        # The code of a suite run never exists as a file: it travels to its process's config (start_code).
        write_files(start.folder, {"solution.py": request["solution"]} if mode == "observe" else {})
        if mode == "suite":
            write_files(tests_dir, request["tests"])
            for name in request["tests"]:
                os.chmod(os.path.join(tests_dir, name), 0o444)
            os.chmod(tests_dir, 0o555)
        output = Output(self.channel, request["id"], self.out_cap)
        started = time.monotonic()
        suite_deadline = started + float(request["timeout"])
        test_timeout = float(request["test_timeout"])
        state = SuiteState(names, [None] * len(names))
        child_config, tests = self.pair_configs(request, mode, start, sol_dir, tests_dir)
        if start.ancestor:
            self.retitled = True
            self.retitle(start.ancestor.encode())
        next_index = 0
        restarts = 0
        watch = self.imports if mode == "observe" else None
        if watch is not None:
            watch.reset()
        if mode == "observe" and isinstance(request.get("watch"), dict):
            self.watching = Watching.of(request["watch"], self.egress)
        while next_index < len(names) and time.monotonic() < suite_deadline and not state.tamper:
            next_index = self.run_pair(mode, child_config, tests, (sol_dir, start), output, state, next_index,
                                       suite_deadline, test_timeout)
            sweep(self.keep_alive)
            if watch is not None:
                watch.settle()
                self.note_lost(state)
            restarts += 1
        for i in range(len(names)):
            if state.outcomes[i] is None and state.tamper:  # its verdict is a failure whatever it would do
                state.set(i, "error", "not run: the suite was tampered with", 0.0)
            elif state.outcomes[i] is None:
                state.set(i, "timeout", f"suite wall clock of {request['timeout']} s exceeded", 0.0)
                state.error = state.error or f"suite wall clock of {request['timeout']} s exceeded"
        result = {
            "outcomes": state.outcomes,
            "tampered": bool(state.tamper),
            "tamper": state.tamper,
            "error": state.error,
            "stdout": output.text("stdout"),
            "stderr": output.text("stderr"),
            "truncated": output.truncated,
            "duration_s": round(time.monotonic() - started, 6),
            "restarts": restarts,
            **self.end_watch(start.folder),
        }
        if watch is not None:
            result["loaded"] = watch.record()
        return result

    def end_watch(self, folder: str) -> dict[str, Any]:
        """The run's ``egress`` record, if it was watched; the watch ends."""
        watching, self.watching = self.watching, None
        return {} if watching is None else {"egress": watching.record(folder)}

    def pair_configs(self, request: dict[str, Any], mode: str, start: CodeStart, sol_dir: str,
                     tests_dir: str) -> tuple[dict[str, Any], dict[str, Any] | None]:
        """The driver's config for ``request``, and what the tests' process needs to run the purple's own tests
        (None in observe mode, whose drivers travel in the driver's config, never as files in the box)."""
        names = [str(n) for n in request["names"]]
        child_config: dict[str, Any] = {"sol_dir": start.folder if mode == "observe" else sol_dir, "names": names,
                                        "program": self.compiled["driver"], "wire": self.compiled["wire"]}
        if start.sibling:
            child_config.update(title=start.sibling, title_code=self.sources["title"])
        if mode == "observe":
            child_config.update(observe=self.sources["observe"], drivers=dict(request["tests"]),
                                seed=int(request.get("seed", 0)))
            return child_config, None
        child_config.update(suite=True)
        interface = request.get("interface")
        tests = {"runner": self.runner_source, "tests_dir": tests_dir, "files": sorted(request["tests"]),
                 "source": str(request["solution"]),
                 "interface": [str(n) for n in interface] if isinstance(interface, list) else None}
        return child_config, tests

    def run_pair(self, mode: str, child_config: dict[str, Any], tests: dict[str, Any] | None,
                 places: tuple[str, CodeStart], output: Output, state: SuiteState, next_index: int,
                 suite_deadline: float, test_timeout: float) -> int:
        """One driver and answerer pair: import, then run the tests from ``next_index`` until done or the pair
        is gone. ``mode`` is observe (hidden drivers) or suite (the purple's own tests: ``tests``, run in a process
        of their own that reaches the code's, ``start_code``, only over the wire). ``places``: the judge's
        processes' folder, and how the code's process starts. Returns the index of the first test still to run.
        """
        names = state.names
        sol_dir = places[0]
        ctl_r, ctl_w = os.pipe()
        res_r, res_w = os.pipe()
        output.set_origin("import")
        guard: JudgeGuard | None = None  # the driver's, once it is ready
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        config = {**child_config, "res": res_w, "control": ours.fileno()}
        pid, out_r, err_r = self.spawn([self.python, "-I", "-S", "-u", "-c", BOOT], sol_dir,
                                       (res_w, ours.fileno()), ctl_r, judge=True)
        pids = [pid]
        ours.close()
        os.close(ctl_r)
        os.close(res_w)
        pipes = Pipes(output, out_r, err_r, res_r)
        try:
            deadline = min(suite_deadline, time.monotonic() + test_timeout + 5.0)
            with contextlib.suppress(OSError):
                write_all(ctl_w, (json.dumps(config) + "\n").encode())
            kind, line = pipes.pump(deadline, True)
            record = parse_record(line) if kind == "line" else None
            if record is not None and record.get("k") == "ready":  # non-dumpable: now the code may run
                guard = JudgeGuard(pid)
                pids.extend(self.start_answering_side(tests, places, theirs, pipes, deadline))
                with contextlib.suppress(OSError):  # the driver measures the code from outside (driver.py)
                    write_all(ctl_w, f"code {pids[-1]}\n".encode())
            theirs.close()  # the answerer's alone: if it closes or loses it, the driver's connections end
            kind, line = pipes.pump(deadline, True)
            record = parse_record(line) if kind == "line" else None
            if record is None or record.get("k") != "imported" or record.get("lost"):
                self.check_judge(guard, state, kind)
                self.fail_import(state, next_index, kind, record, end_all(pids))
                return len(names)
            state.note_import(record, suite=mode == "suite")
            while next_index < len(names):
                done = self.run_one(mode, pids, ctl_w, pipes, state, next_index, suite_deadline, test_timeout, guard)
                if not done:
                    return next_index + 1
                next_index += 1
            with contextlib.suppress(OSError):
                os.close(ctl_w)  # EOF on its control pipe: the driver exits, and with it the answerer
            ctl_w = -1
            end_all(pids)
            return next_index
        finally:
            theirs.close()
            pipes.drain()
            pipes.close(ctl_w)

    def start_answering_side(self, tests: dict[str, Any] | None, places: tuple[str, CodeStart],
                             theirs: socket.socket, pipes: Pipes, deadline: float) -> list[int]:
        """The processes that answer the driver (``theirs``: its socket's other end), the code's process last
        (whose end and CPU time a test's record names): the code's own answerer for hidden drivers (``tests`` is
        None), else the purple's tests' process and the code's process it reaches over the wire."""
        sol_dir, start = places
        if tests is None:
            if self.imports is not None:  # what the driver opened is queued by now: the code's opens come next
                self.imports.arm(start.folder)
            if self.watching is not None:
                self.watching.arm(self.egress, [self.work_root, *SCRATCH, *self.roots])
            return self.start_answerer(start, {"sol_dir": start.folder}, (theirs,), pipes)
        code = {key: tests[key] for key in CODE_KEYS}
        code_pids, code_end = self.start_code(code, start, pipes, deadline)
        config = {key: value for key, value in tests.items() if key not in CODE_KEYS}
        config.update(code=code_end.fileno(), sol_dir=sol_dir)
        try:
            return [*self.start_answerer(self.code_start(None, sol_dir), config, (theirs, code_end), pipes),
                    *code_pids]
        finally:
            code_end.close()

    @staticmethod
    def fail_import(state: SuiteState, next_index: int, kind: str, record: dict[str, Any] | None, end: str) -> None:
        """Every test from ``next_index`` on, when the pair never reported its import (``kind``: how the read
        of the channel ended)."""
        if kind == "timeout":
            status, reason = "timeout", "timeout while importing the tests"
        elif record is not None and record.get("lost"):
            status, reason = "crashed", f"the code's process failed while importing: {end}"
        elif kind == "line":
            status, reason = "error", "the judge's channel carried a forged record"
            state.note_tamper(["forged record on the result channel"])
        else:
            status, reason = "crashed", "the judge's driver died while importing the tests: " + end
        state.error = state.error or reason
        for i in range(next_index, len(state.names)):
            state.set(i, status, reason, 0.0)

    def start_answerer(self, start: CodeStart, config: dict[str, Any], sockets: tuple[socket.socket, ...],
                       pipes: Pipes) -> list[int]:
        """A process running ``answerer.py`` with ``config`` (its first socket is its control socket: see there
        for the parts it plays), started as ``start`` says. It holds nothing the host reads. Its pid last,
        after the shell's that started it, if one did (``CodeStart.shell``)."""
        cfg_r, cfg_w = os.pipe()
        pid, out_r, err_r = self.spawn(start.argv, start.folder, tuple(s.fileno() for s in sockets), cfg_r,
                                       env=start.env, watched=True)
        os.close(cfg_r)
        config = {"program": self.compiled["answerer"], "wire": self.compiled["wire"],
                  "control": sockets[0].fileno(), "ordinary": start.shell, **config}
        with contextlib.suppress(OSError):
            write_all(cfg_w, (json.dumps(config) + "\n").encode())
        os.close(cfg_w)
        pipes.add_output(out_r, err_r)
        if not start.shell:
            return [pid]
        child = shell_child(pid, time.monotonic() + 5.0)
        return [pid] if child is None else [pid, child]

    def start_code(self, code: dict[str, Any], start: CodeStart, pipes: Pipes,
                   deadline: float) -> tuple[list[int], socket.socket]:
        """The process of the code the purple's tests run against (``code``: its ``source`` and the
        ``interface`` the tests may read), and the end of its control socket for the tests' process. The
        tests' process starts only once this one said it is non-dumpable; if it never does, it is killed, and
        the tests find it gone."""
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        pids = self.start_answerer(start, code, (ours,), pipes)
        ours.close()
        theirs.settimeout(max(0.001, deadline - time.monotonic()))
        try:
            ready = theirs.recv(16) == b"ready"
        except OSError:
            ready = False
        theirs.settimeout(None)
        if not ready:
            kill_group(pids[0])
        return pids, theirs

    def note_lost(self, state: SuiteState) -> None:
        """A record of imports that lost opens is the code's doing (thousands of files opened): tampering."""
        if self.imports is not None and self.imports.lost:
            state.note_tamper(["lost the record of the modules it loaded (more opens than the kernel's queue holds)"])

    @staticmethod
    def check_judge(guard: JudgeGuard | None, state: SuiteState, kind: str) -> None:
        """Note as tampering what the code did to the driver (``kind``: how its last read of the channel ended)."""
        why = guard.interference(ended=kind == "eof") if guard is not None else None
        if why is not None:
            state.note_tamper([why])

    def run_one(self, mode: str, pids: list[int], ctl_w: int, pipes: Pipes, state: SuiteState, index: int,
                suite_deadline: float, test_timeout: float, guard: JudgeGuard | None) -> bool:
        """Ask the driver for test ``index``; record its outcome. False when the pair is gone or must go."""
        name = state.names[index]
        pipes.output.set_origin(name)
        nonce = os.urandom(16).hex()
        code_pid = pids[-1]  # the answerer: the process the code runs in
        cpu0 = cpu_seconds(code_pid)
        t0 = time.monotonic()
        deadline = min(suite_deadline, t0 + test_timeout)
        try:
            os.write(ctl_w, f"run {index} {nonce}\n".encode())
        except OSError:
            # The driver is gone; still read what it left on the channel (a forgery is reported).
            deadline = min(deadline, time.monotonic() + 1.0)
        kind, line = pipes.pump(deadline, True)
        elapsed = time.monotonic() - t0
        if self.imports is not None and mode == "observe":
            self.imports.drain()  # between tests, so that the kernel's queue holds one test's opens at most
            self.note_lost(state)
        self.check_judge(guard, state, kind)
        cpu1 = cpu_seconds(code_pid)
        cpu = cpu1 - cpu0 if cpu0 is not None and cpu1 is not None else None
        pipes.drain_ready()  # output written before the record belongs to this test
        if kind == "line":
            record = parse_record(line)
            expected_kind = "obs" if mode == "observe" else "verdict"
            if record is None or record.get("k") != expected_kind or record.get("nonce") != nonce \
                    or record.get("i") != index:
                state.note_tamper([f"forged or out-of-order result record during {name}"])
                state.set(index, "error", "forged result record on the judge's channel", elapsed, cpu_s=cpu)
                return False
            if record.get("lost") and record.get("stopped") is not True:  # died or broke the protocol: a crash
                end = end_all(pids)
                reason = f"the code's process broke the protocol or died ({str(record['lost'])[:200]}; {end})"
                state.set(index, "crashed", reason, elapsed, cpu_s=cpu)
                return False
            if mode == "suite":
                self.record_verdict(state, index, record, elapsed, cpu)
                return True
            obs = record.get("obs")
            well_formed = isinstance(obs, list) and shallow(obs)
            state.set(index, "observed", "", elapsed, obs if well_formed else [["malformed"]], cpu)
            if record.get("stopped") is True:  # the driver killed the code's process on purpose
                end_all(pids)
                return False
            return True
        # timeout, eof, flood: the pair is gone or must go.
        end = end_all(pids)
        if kind == "timeout":
            if time.monotonic() >= suite_deadline:
                state.set(index, "timeout", "suite wall clock exceeded", elapsed, cpu_s=cpu)
            else:
                state.set(index, "timeout", f"test exceeded {test_timeout:g} s", elapsed, cpu_s=cpu)
        elif kind == "flood":
            state.note_tamper(["flooded the result channel"])
            state.set(index, "error", "flooded the judge's channel", elapsed, cpu_s=cpu)
        else:
            state.set(index, "crashed", "the test process " + end, elapsed, cpu_s=cpu)
        return False

    @staticmethod
    def record_verdict(state: SuiteState, index: int, record: dict[str, Any], elapsed: float,
                       cpu: float | None) -> None:
        """One of the purple's own tests, as the code's process answered it (the driver checked its shape).
        Tampering it admits fails this test and, through ``state.tamper``, the rest of the suite."""
        reasons = tamper_in(record)
        state.note_tamper(reasons)
        status, reason = record.get("status"), str(record.get("reason", ""))
        if status not in ("passed", "failed", "error"):
            status, reason = "error", "bad verdict"
        if reasons:
            status, reason = "failed", "tampered: " + reasons[0]
        state.set(index, str(status), reason, elapsed, cpu_s=cpu)

    # ---- scripts --------------------------------------------------------------------------------

    def run_script(self, request: dict[str, Any], folder: str) -> dict[str, Any]:
        files = dict(request["files"])
        files["main.py"] = request["script"]
        write_files(folder, files)
        output = Output(self.channel, request["id"], self.out_cap)
        output.set_origin("script")
        started = time.monotonic()
        pid, out_r, err_r = self.spawn([self.python, "-E", "-s", "-S", "-u", "main.py"], folder)
        pipes = Pipes(output, out_r, err_r)
        ended: list[int] = []

        def exited() -> bool:
            if not ended:
                try:
                    done, status = os.waitpid(pid, os.WNOHANG)
                except ChildProcessError:
                    done, status = pid, 0
                if done == pid:
                    ended.append(status)
            return bool(ended)

        kind, _ = pipes.pump(started + float(request["timeout"]), False, exited)
        timed_out = kind == "timeout"
        code = sig = None
        if timed_out:
            kill_group(pid)
            reap(pid)
        else:
            if not exited():
                ended.append(os.waitpid(pid, 0)[1])
            status = ended[0]
            code = os.WEXITSTATUS(status) if os.WIFEXITED(status) else None
            sig = os.WTERMSIG(status) if os.WIFSIGNALED(status) else None
        elapsed = time.monotonic() - started
        pipes.drain()
        pipes.close()
        sweep(self.keep_alive)
        return {
            "exit_code": code,
            "signal": sig,
            "stdout": output.text("stdout"),
            "stderr": output.text("stderr"),
            "timed_out": timed_out,
            "truncated": output.truncated,
            "duration_s": round(elapsed, 6),
        }

    # ---- the request loop -----------------------------------------------------------------------

    def handle(self, request: dict[str, Any]) -> None:
        # A fresh folder whose name no earlier run could predict: nothing planted there can shadow a module.
        folder = os.path.join(self.work_root, f"run{os.urandom(8).hex()}")
        try:
            op = request.get("op")
            if op in ("suite", "observe"):
                os.makedirs(folder)
                result = self.run_suite(request, folder, str(op)) if self.degraded is None else \
                    self.refuse_suite(request)
                self.degraded = self.degraded or self.changed()
                if self.degraded is not None and self.degraded not in result["tamper"]:
                    result["tamper"].append(self.degraded)
                    result["tampered"] = True
            elif op == "script":
                os.makedirs(folder)
                result = self.run_script(request, folder)
            elif op == "ping":
                result = {}
            else:
                raise ValueError(f"unknown op {op!r}")
        except Exception as exc:
            sweep(self.keep_alive)
            self.channel.send({"ev": "done", "id": request.get("id"), "error": f"{type(exc).__name__}: {exc}"})
        else:
            self.channel.send({"ev": "done", "id": request.get("id"), "result": result})
        finally:
            if self.watching is not None:  # a run that failed before its record: its watch ends all the same
                self.watching.record("")
                self.watching = None
            if op != "ping":  # nothing one run leaves reaches the next
                remove_tree(folder)
                self.clear_places()
            if self.retitled:
                self.retitle(self.title)
                self.retitled = False

    def serve(self) -> None:
        self.channel.send({"ev": "ready", "python": sys.version.split()[0], "pid": os.getpid()})
        stdin_fd = sys.stdin.fileno()
        pending = b""
        while True:
            while b"\n" not in pending:
                chunk = os.read(stdin_fd, 1 << 20)
                if not chunk:
                    sweep(self.keep_alive)
                    os._exit(0)
                pending += chunk
            line, pending = pending.split(b"\n", 1)
            request = parse_record(line)
            if request is None:
                self.channel.send({"ev": "done", "id": None, "error": "bad request"})
                continue
            self.handle(request)


def main() -> None:
    server = Server(json.loads(sys.argv[1]))
    ignore_signals(True)  # PID 1 in Docker, where a handler would let the code's signals in: Python's SIGINT one
    prctl(4, 0)  # PR_SET_DUMPABLE 0
    prctl(36, 1)  # PR_SET_CHILD_SUBREAPER: orphans come back to us to be reaped and swept
    server.serve()


if __name__ == "__main__":
    main()
