"""How the judge's own processes look to the code: their command line and name, rewritten for a run. Stdlib only.

Runs INSIDE the sandbox, in the harness server and the driver, never in the code's process. An ordinary setting
(``logomesh/sandbox/setting.py``) names the processes around the code as the machine it imitates names its own:
the server reads as the parent of the shell that started the code, the driver as another process of that
machine. ``own_memory`` must be called while the process is still dumpable.
"""

from __future__ import annotations

from typing import Any

PR_SET_NAME = 15


def own_memory() -> Any:
    """This process's ``/proc/self/mem``, opened for ``retitle`` while the process is still dumpable (after
    ``non_dumpable`` its ``/proc`` files belong to root, and under Docker it can no longer open it); None if
    the kernel refused. Not inherited by children."""
    try:
        return open("/proc/self/mem", "r+b", buffering=0)
    except OSError:
        return None


def rename(name: bytes) -> None:
    """Set this process's ``comm`` (``/proc/<pid>/comm``, what ``ps`` and ``top`` show; 15 bytes at most)."""
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_NAME, ctypes.c_char_p(name[:15]), 0, 0, 0)
    except (OSError, AttributeError):
        pass


def retitle(title: bytes, mem: Any) -> bool:
    """Make ``/proc/<pid>/cmdline`` of this process read ``title`` (one string), as setproctitle does:
    the bytes of its argv area (``arg_start``..``arg_end`` in ``/proc/self/stat``) are rewritten in place
    through ``mem`` (``own_memory()``), padded, and the area's last byte is left non-NUL, so the kernel reads
    it up to the title's end; ``comm`` is named after its program. ``title`` is cut to the area's size; a
    title of exactly that size (what ``/proc/self/cmdline`` read before) is written as it is, which restores
    it. False when the kernel refused; Python's ``sys.argv`` is a copy and does not change."""
    if mem is None:
        return False
    try:
        with open("/proc/self/stat", "rb") as handle:
            fields = handle.read().rpartition(b")")[2].split()
        start, end = int(fields[45]), int(fields[46])  # arg_start and arg_end: fields 48 and 49
        size = end - start
        if size < 2:
            return False
        text = title[:size - 2] + b"\0"
        mem.seek(start)
        mem.write(title if len(title) == size else text + b"\0" * (size - len(text) - 1) + b" ")
    except (OSError, ValueError, IndexError):
        return False
    program = title.split(b"\0", 1)[0].split(b" ", 1)[0]
    rename(program.rpartition(b"/")[2].lstrip(b"-") or b"sh")
    return True
