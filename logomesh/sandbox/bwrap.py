"""The bubblewrap backend, for hosts without Docker.

The harness server runs as PID 1 of fresh user, pid, net, ipc, uts and cgroup
namespaces, as uid 65534, with every capability dropped. Its ``/`` is the
sandbox image's own root filesystem, unpacked by ``logomesh sandbox build``
(``image.root_dir``) and bound read-only, so it runs the same interpreter and
pytest as the Docker backend, never the host's; it also sees its own /proc and
/dev, and size-limited tmpfs for /tmp and /work: no host file, no network, no
host environment. Memory, processes, files and CPU time are limited with
rlimits on every untrusted process and,
where the host lets us create one, by a cgroup with Docker's figures (128 MB,
50 pids, half a CPU; see ``cgroup.py``); the wall-clock kill and the output
cap are the harness's, as in Docker.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import threading
from functools import cache
from pathlib import Path
from types import TracebackType

from logomesh.sandbox import cgroup
from logomesh.sandbox.base import (
    DEFAULT_LIMITS,
    Backend,
    Limits,
    SandboxUnavailable,
)
from logomesh.sandbox.client import HarnessClient, HarnessRuns, server_argv
from logomesh.sandbox.farm import make_farm, remove_farm
from logomesh.sandbox.image import LIBRARY, image_tag, root_dir
from logomesh.sandbox.seccomp import keyring_filter
from logomesh.sandbox.setting import ROOTS

WORK_DIR = "/work"
SANDBOX_UID = "65534"
ROOT_HINT = "run: logomesh sandbox build --offline (add --root-only on a host without Docker)"


def sandbox_root(tag: str | None = None) -> tuple[Path, str]:
    """The image's unpacked root and the interpreter in it (a path inside the box)."""
    root = root_dir(tag)
    if not root.is_dir():
        raise SandboxUnavailable(f"the sandbox root {root} is missing: {ROOT_HINT}")
    for python in ("/usr/local/bin/python3", "/usr/bin/python3"):  # python:3.x-slim, Debian
        if (root / python.lstrip("/")).exists():
            return root, python
    raise SandboxUnavailable(f"the sandbox root {root} has no python3: {ROOT_HINT} --force")


def _own_process_count() -> int:
    """Processes of our uid: RLIMIT_NPROC counts them all, so the sandbox gets that many plus its share."""
    uid = os.getuid()
    count = 0
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                if os.stat(f"/proc/{entry}").st_uid == uid:
                    count += 1
            except OSError:
                continue
    return count


@cache
def bwrap_options(binary: str) -> frozenset[str]:
    """The long options this bubblewrap knows (``--size`` and ``--as-pid-1`` are recent)."""
    done = subprocess.run([binary, "--help"], capture_output=True, timeout=20, check=False)
    text = (done.stdout + done.stderr).decode(errors="replace")
    return frozenset(word for word in text.split() if word.startswith("--"))


SECCOMP_FD = "<seccomp fd>"  # in ``bwrap_argv``, replaced by the descriptor of the filter when the box starts


def bwrap_argv(root: Path, limits: Limits) -> list[str]:
    binary = shutil.which("bwrap")
    if binary is None:
        raise SandboxUnavailable("bubblewrap not found: apt-get install bubblewrap")
    known = bwrap_options(binary)
    # As PID 1 the harness cannot be killed from inside; without --as-pid-1 it is PID 2 and relies on sweeping.
    pid1 = ["--as-pid-1"] if "--as-pid-1" in known else []
    argv = [binary, "--unshare-all", "--die-with-parent", "--new-session", *pid1, "--seccomp", SECCOMP_FD,
            "--clearenv",
            "--setenv", "PATH", "/usr/local/bin:/usr/bin:/bin", "--uid", SANDBOX_UID, "--gid", SANDBOX_UID,
            "--cap-drop", "ALL", "--hostname", os.urandom(6).hex(), "--ro-bind", str(root), "/"]
    sized = "--size" in known  # older bubblewrap: tmpfs unbounded, RLIMIT_FSIZE still caps each file
    argv += ["--proc", "/proc", "--dev", "/dev"]
    argv += [*(["--size", str(limits.tmpfs_bytes)] if sized else []), "--tmpfs", WORK_DIR]
    argv += [*(["--size", str(8 * 1024 * 1024)] if sized else []), "--tmpfs", "/tmp"]
    for place in ROOTS:  # where an ordinary setting's folder lives (setting.py)
        argv += [*(["--size", str(limits.tmpfs_bytes)] if sized else []), "--tmpfs", place]
    argv += ["--chdir", WORK_DIR]
    return argv


def _seccomp_rules() -> int:
    """A descriptor to read the box's seccomp filter from (``seccomp.keyring_filter``): a pipe's reading end,
    the program already written and the writing end closed."""
    read_end, write_end = os.pipe()
    try:
        os.write(write_end, keyring_filter())  # a few hundred bytes: well within a pipe's buffer
    finally:
        os.close(write_end)
    return read_end


class BwrapSandbox(HarnessRuns):
    def __init__(self, limits: Limits = DEFAULT_LIMITS) -> None:
        self._limits = limits
        self._tag = image_tag()
        root, python = sandbox_root(self._tag)
        # Without a cgroup the data rlimit is the memory limit: keep it near the Docker figure.
        extra = {
            "process_memory_bytes": min(limits.process_memory_bytes, 4 * limits.memory_bytes),
            "nproc": _own_process_count() + limits.pids,
        }
        farm = make_farm(root, LIBRARY)  # the box's own library folders, for its record of imports
        self._farm = farm[0] if farm is not None else None
        binds = [arg for place in (farm[1] if farm else []) for arg in ("--ro-bind", str(self._farm) + place, place)]
        library = tuple(farm[1]) if farm is not None else ()
        argv = bwrap_argv(root, limits) + binds + server_argv(python, WORK_DIR, limits, extra, library)
        cgroup.sweep_orphans()  # what SIGKILLed battles left behind, like docker.remove_orphans
        self._cgroup = cgroup.create(limits)
        if self._cgroup is not None:
            argv = self._cgroup.wrap(argv)
        rules = _seccomp_rules()
        argv[argv.index(SECCOMP_FD)] = str(rules)
        try:
            self._proc = subprocess.Popen(
                argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env={},
                pass_fds=(rules,),
            )
        except OSError as exc:
            if self._cgroup is not None:
                self._cgroup.remove()
            self._remove_farm()
            raise SandboxUnavailable(f"bubblewrap could not start: {exc}") from None
        finally:
            os.close(rules)
        self._harness = HarnessClient(self._send, self._kill, limits)
        threading.Thread(target=self._read_loop, name="logomesh-bwrap-reader", daemon=True).start()
        stderr_reader = threading.Thread(target=self._read_stderr, name="logomesh-bwrap-stderr", daemon=True)
        stderr_reader.start()
        try:
            self._harness.wait_ready()
        except SandboxUnavailable as exc:
            self.close()
            stderr_reader.join(timeout=2)  # bubblewrap's own complaint, e.g. user namespaces disabled
            detail = self._harness.diagnosis()
            message = f"{exc}: {detail}" if detail and detail not in str(exc) else str(exc)
            raise SandboxUnavailable(f"bubblewrap: {message}") from None

    @property
    def backend(self) -> Backend:
        return "bwrap"

    @property
    def image_id(self) -> str:
        return f"bwrap:{self._tag}:python-{self._harness.python_version}"

    @property
    def limits_note(self) -> str:
        """How the limits are enforced here, for ``sandbox doctor``."""
        if self._cgroup is None:
            return "rlimits only (no writable cgroup)"
        return f"rlimits + cgroup v{self._cgroup.version} (memory, pids, cpu)"

    @property
    def cgroup_dirs(self) -> list[Path]:
        return list(self._cgroup.dirs) if self._cgroup is not None else []

    def _send(self, data: bytes) -> None:
        stdin = self._proc.stdin
        if stdin is None:
            raise OSError("no stdin")
        stdin.write(data)
        stdin.flush()

    def _kill(self) -> None:
        self._proc.kill()

    def _read_loop(self) -> None:
        stdout = self._proc.stdout
        assert stdout is not None
        for line in stdout:
            self._harness.feed_line(line.rstrip(b"\n"))
        self._harness.feed_eof()

    def _read_stderr(self) -> None:
        stderr = self._proc.stderr
        assert stderr is not None
        for line in stderr:
            self._harness.feed_stderr(line)

    def close(self) -> None:
        if self._proc.poll() is None:
            self._proc.kill()
        self._proc.wait(timeout=30)
        for stream in (self._proc.stdin, self._proc.stdout, self._proc.stderr):
            if stream is not None:
                stream.close()
        if self._cgroup is not None:
            self._cgroup.remove()
            self._cgroup = None
        self._remove_farm()

    def _remove_farm(self) -> None:
        if self._farm is not None:
            remove_farm(self._farm)
            self._farm = None

    def __enter__(self) -> BwrapSandbox:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()
