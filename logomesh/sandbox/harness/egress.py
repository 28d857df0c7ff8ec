"""What the code's processes send out of themselves, seen from the harness server: files and connections. Stdlib only.

Runs INSIDE the sandbox, in the harness server (exec'd like ``title.py``), never in the code's process, for an
``observe`` request that asks for a watch (the injection oracles, ``logomesh/inject/oracles.py``). Two records,
both kept outside every process the code runs in, so nothing the code does to itself hides them:

* **Writes** (``WriteWatch``): inotify on every place a run may write (the work folder, ``/tmp``, ``/dev``,
  ``/dev/shm``, ``/dev/mqueue``, the settings' roots), armed just before the code's process starts. Each file
  created, written or moved in is named, with what it holds when the run ends (a file removed before then is
  named, its bytes lost). inotify names no writer: the judge's own processes write nothing once the code runs.
* **Connections** (``Supervisor``): the code's process starts under a seccomp filter that hands ``socket`` of an
  internet family, ``connect``, ``sendmsg``, ``sendto`` with an address and ``setsockopt`` of an internet
  protocol's level to this server (seccomp user
  notification; ``logomesh/sandbox/seccomp.py::watch_filter`` builds it on the host). The filter is inherited by
  every thread and child, and no process can remove it. An internet socket the code asks for is made here, as
  one end of a local socket pair, and placed in the code's process (``SECCOMP_IOCTL_NOTIF_ADDFD``); its
  ``connect`` is answered as a success, so what the code then sends arrives at the pair's other end, held
  here. The box still has no network: nothing leaves it. Addresses are read from the process's memory
  (``/proc/<pid>/mem``); a process that made itself non-dumpable hides them, and what it sends over a pair
  is still read here.
"""

from __future__ import annotations

import base64
import contextlib
import ctypes
import os
import platform
import select
import socket
import stat
import struct
import threading
from typing import Any

IN_MODIFY, IN_CLOSE_WRITE, IN_MOVED_TO, IN_CREATE = 0x2, 0x8, 0x80, 0x100
IN_Q_OVERFLOW, IN_ISDIR = 0x4000, 0x40000000
WRITE_MASK = IN_MODIFY | IN_CLOSE_WRITE | IN_MOVED_TO | IN_CREATE
INOTIFY_EVENT = struct.Struct("iIII")
MAX_PATHS = 200  # written paths a record names
HEAD_BYTES = 64 << 10  # of each written file, and of what each socket received
MAX_EVENTS = 200  # socket events a record holds

# seccomp user notification (linux/seccomp.h): the ioctls and their structs, the same on x86_64 and aarch64.
NOTIF_RECV, NOTIF_SEND, NOTIF_ID_VALID, NOTIF_ADDFD = 0xC0502100, 0xC0182101, 0x40082102, 0x40182103
NOTIF = struct.Struct("=QII iIQ6Q")  # id, pid, flags, then seccomp_data: nr, arch, ip, args[6]
RESPONSE = struct.Struct("=QqiI")  # id, val, error, flags
ADDFD = struct.Struct("=QIIII")  # id, flags, srcfd, newfd, newfd_flags
FLAG_CONTINUE, ADDFD_SEND = 1, 2
FILTER_NEW_LISTENER, SET_MODE_FILTER = 8, 1
SECCOMP_CALL = {"x86_64": 317, "aarch64": 277}
HANDOFF_FD = 1023  # above every descriptor the code may hold (RLIMIT_NOFILE, harness/server.py)
PR_SET_NO_NEW_PRIVS, PR_SET_DUMPABLE = 38, 4
SOCK_NONBLOCK, SOCK_CLOEXEC = 0o4000, 0o2000000
MSGHDR = struct.Struct("=QI4xQQQQi4x")  # name, namelen, iov, iovlen, control, controllen, flags
IOVEC = struct.Struct("=QQ")


def libc() -> Any:
    return ctypes.CDLL(None, use_errno=True)


def inotify_events(fd: int) -> tuple[list[tuple[int, int, bytes]], bool]:
    """Every event queued on the non-blocking inotify ``fd``, as (watch, mask, name), and whether the reads
    ended cleanly (false: a read failed and events may be lost). The server's ``ImportWatch`` reads with it too."""
    events: list[tuple[int, int, bytes]] = []
    while True:
        try:
            data = os.read(fd, 1 << 16)
        except BlockingIOError:
            return events, True
        except OSError:
            return events, False
        offset = 0
        while offset + INOTIFY_EVENT.size <= len(data):
            wd, mask, _, length = INOTIFY_EVENT.unpack_from(data, offset)
            start = offset + INOTIFY_EVENT.size
            events.append((wd, mask, data[start:start + length].rstrip(b"\0")))
            offset = start + length


def install(program: bytes) -> int:
    """In the code's process, between fork and exec: the filter, with a listener; the listener's fd, or
    ``-errno``. The process is made dumpable, as exec would make it, so the server can read its memory."""
    calls = libc()
    number = SECCOMP_CALL.get(platform.machine())
    if number is None:
        return -38  # ENOSYS: no seccomp number known for this machine
    calls.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)
    calls.prctl(PR_SET_DUMPABLE, 1, 0, 0, 0)
    buffer = ctypes.create_string_buffer(program)
    prog = struct.pack("=H6xQ", len(program) // 8, ctypes.addressof(buffer))
    prog_buffer = ctypes.create_string_buffer(prog)
    fd = int(calls.syscall(number, SET_MODE_FILTER, FILTER_NEW_LISTENER, prog_buffer))
    return fd if fd >= 0 else -ctypes.get_errno()


def hand_over(end: socket.socket, program: bytes) -> None:
    """In the code's process, between fork and exec: install the filter and send its listener to the server over
    ``end``, from ``HANDOFF_FD``, the one descriptor the filter lets ``sendmsg`` through unwatched (the code never
    holds it: its descriptors stay below ``RLIMIT_NOFILE``, set lower after this); ``e<errno>`` if it failed."""
    try:
        os.dup2(end.fileno(), HANDOFF_FD)
    except OSError as exc:  # a descriptor limit below it: the code runs unwatched, the record says so
        end.send(f"e{exc.errno or 1}".encode())
        return
    handoff = socket.socket(fileno=HANDOFF_FD)
    listener = install(program)
    if listener < 0:
        handoff.send(f"e{-listener}".encode())
    else:
        socket.send_fds(handoff, [b"l"], [listener])
        os.close(listener)
    handoff.close()


def adopt(end: socket.socket) -> int:
    """The listener the child sent over ``end``, or ``-errno``."""
    end.settimeout(10.0)
    message, fds, _, _ = socket.recv_fds(end, 32, 1)
    if fds:
        return fds[0]
    return -int(message[1:]) if message[1:].isdigit() else -1


def read_memory(pid: int, address: int, size: int) -> bytes | None:
    """``size`` bytes of ``pid``'s memory at ``address``; None when the process hides it (non-dumpable)."""
    if address == 0 or size <= 0:
        return None
    try:
        fd = os.open(f"/proc/{pid}/mem", os.O_RDONLY)
    except OSError:
        return None
    try:
        return os.pread(fd, size, address)
    except OSError:
        return None
    finally:
        os.close(fd)


def address_of(raw: bytes | None) -> tuple[int, str] | None:
    """A ``sockaddr``'s family and its address as text (``host:port``; a path for a local socket)."""
    if raw is None or len(raw) < 2:
        return None
    family = int.from_bytes(raw[:2], "little")
    if family == socket.AF_INET and len(raw) >= 8:
        return family, f"{socket.inet_ntop(socket.AF_INET, raw[4:8])}:{int.from_bytes(raw[2:4], 'big')}"
    if family == socket.AF_INET6 and len(raw) >= 24:
        return family, f"[{socket.inet_ntop(socket.AF_INET6, raw[8:24])}]:{int.from_bytes(raw[2:4], 'big')}"
    if family == socket.AF_UNIX:
        return family, raw[2:].split(b"\0", 1)[0].decode("utf-8", "replace") or "(unnamed)"
    return family, f"family {family}"


class Supervisor:
    """The connections of one run's code: one thread per listener (one per code's process started), each
    answering the filter's notifications; the events they saw, and what the code sent over the pairs."""

    def __init__(self, calls: dict[str, dict[str, str]]) -> None:
        self.names = {int(arch): {int(nr): name for nr, name in table.items()} for arch, table in calls.items()}
        self.events: list[dict[str, Any]] = []
        self.pairs: list[tuple[dict[str, Any], socket.socket]] = []  # (its socket event, our end)
        self.lock = threading.Lock()
        self.threads: list[threading.Thread] = []
        self.stop = threading.Event()
        self.lost = False
        self.calls = libc()

    def note(self, event: dict[str, Any]) -> bool:
        """Keep ``event``; when the record is full, in the place of the oldest socket nothing was sent over yet
        (its pair closed: code that floods the record with empty sockets first cannot push a later one out)."""
        with self.lock:
            if len(self.events) >= MAX_EVENTS and not self.evict():
                self.lost = True
                return False
            self.events.append(event)
            return True

    def evict(self) -> bool:
        for at, (event, ours) in enumerate(self.pairs):
            try:
                if ours.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT):
                    continue  # it carried something: kept
            except BlockingIOError:
                pass
            except OSError:
                continue
            ours.close()  # the code's end now reads an end and cannot send: nothing it sends is lost unseen
            del self.pairs[at]
            self.events.remove(event)
            return True
        return False

    def watch(self, listener: int) -> None:
        thread = threading.Thread(target=self.serve, args=(listener,), daemon=True)
        self.threads.append(thread)
        thread.start()

    def serve(self, listener: int) -> None:
        poller = select.poll()
        poller.register(listener, select.POLLIN)
        buffer = ctypes.create_string_buffer(NOTIF.size)
        try:
            while not self.stop.is_set():
                ready = poller.poll(100)
                if not ready:
                    continue
                if ready[0][1] & (select.POLLHUP | select.POLLERR) and not ready[0][1] & select.POLLIN:
                    return  # every process under the filter is gone
                ctypes.memset(buffer, 0, NOTIF.size)
                if self.calls.ioctl(listener, NOTIF_RECV, buffer) != 0:
                    continue  # the call was interrupted, or its process died meanwhile
                self.answer(listener, NOTIF.unpack(buffer.raw))
        finally:
            os.close(listener)

    def respond(self, listener: int, ident: int, value: int = 0, error: int = 0, flags: int = 0) -> None:
        self.calls.ioctl(listener, NOTIF_SEND, ctypes.create_string_buffer(RESPONSE.pack(ident, value, error, flags)))

    def answer(self, listener: int, notif: tuple[int, ...]) -> None:
        ident, pid, _, nr, arch, _, *args = notif
        name = self.names.get(arch, {}).get(nr)
        try:
            if name == "socket":
                self.made_socket(listener, ident, pid, args)
            elif name == "connect":
                self.connected(listener, ident, pid, args)
            elif name in ("sendto", "sendmsg"):
                self.sent(listener, ident, pid, name, args)
            elif name == "setsockopt":  # an internet protocol's option (TCP_NODELAY, IP_RECVERR): a local pair has
                self.respond(listener, ident)  # none, and code that sets one must not fail before it sends
            else:
                self.respond(listener, ident, flags=FLAG_CONTINUE)
        except Exception:  # the judge's side never fails the code's call: let it run as it would
            self.lost = True
            self.respond(listener, ident, flags=FLAG_CONTINUE)

    def made_socket(self, listener: int, ident: int, pid: int, args: list[int]) -> None:
        """An internet socket: one end of a local pair instead, our end kept."""
        family, kind = args[0] & 0xFFFFFFFF, args[1] & 0xFFFFFFFF
        stream = kind & 0xF == socket.SOCK_STREAM
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM if stream else socket.SOCK_DGRAM)
        try:
            theirs.setblocking(not kind & SOCK_NONBLOCK)
            ours.setblocking(False)
            if stream:
                ours.shutdown(socket.SHUT_WR)  # the code reads an end at once: no peer answers it
            request = ADDFD.pack(ident, ADDFD_SEND, theirs.fileno(), 0, os.O_CLOEXEC if kind & SOCK_CLOEXEC else 0)
            placed = self.calls.ioctl(listener, NOTIF_ADDFD, ctypes.create_string_buffer(request))
        finally:
            theirs.close()
        event = {"call": "socket", "pid": pid, "family": family, "type": kind & 0xF, "fd": placed, "address": None,
                 "hidden": False}
        kept = self.note(event)
        if placed < 0:
            self.respond(listener, ident, flags=FLAG_CONTINUE)
        if placed < 0 or not kept:
            ours.close()  # no record to keep what arrives there (the record is full, and says so)
        else:
            with self.lock:
                self.pairs.append((event, ours))

    def valid(self, listener: int, ident: int) -> bool:
        """The notification still stands (its process did not die and its pid was not reused meanwhile)."""
        return int(self.calls.ioctl(listener, NOTIF_ID_VALID, ctypes.byref(ctypes.c_uint64(ident)))) == 0

    def connected(self, listener: int, ident: int, pid: int, args: list[int]) -> None:
        raw = read_memory(pid, args[1], min(args[2] & 0xFFFFFFFF, 128))
        found = address_of(raw) if self.valid(listener, ident) else None
        if found is not None and found[0] not in (socket.AF_INET, socket.AF_INET6):
            self.respond(listener, ident, flags=FLAG_CONTINUE)  # the box's own local sockets: as they are
            return
        address = found[1] if found else None
        with self.lock:  # the socket it connects, if it is one of ours, is now a connection to that address
            ours = [e for e in self.events if e["call"] == "socket" and e["fd"] == args[0] & 0xFFFFFFFF][-1:]
            for event in ours:
                event.update(address=event["address"] or address, hidden=event["hidden"] or found is None)
        if not ours:  # a socket that is not one of ours (its record was full): the attempt alone
            self.note({"call": "connect", "pid": pid, "address": address, "hidden": found is None})
        self.respond(listener, ident)  # connected: to our end of the pair, where the socket is one of ours

    def sent(self, listener: int, ident: int, pid: int, name: str, args: list[int]) -> None:
        if name == "sendto":
            where, payload = read_memory(pid, args[4], min(args[5] & 0xFFFFFFFF, 128)), [(args[1], args[2])]
        else:
            header = read_memory(pid, args[1], MSGHDR.size)
            if header is None or len(header) < MSGHDR.size:
                self.respond(listener, ident, flags=FLAG_CONTINUE)
                return
            name_at, name_len, iov_at, iov_len = MSGHDR.unpack(header)[:4]
            if name_at == 0:
                self.respond(listener, ident, flags=FLAG_CONTINUE)  # a connected socket's: the kernel's own path
                return
            where = read_memory(pid, name_at, min(name_len, 128))
            vectors = read_memory(pid, iov_at, IOVEC.size * min(iov_len, 16)) or b""
            payload = [IOVEC.unpack_from(vectors, i) for i in range(0, len(vectors) - IOVEC.size + 1, IOVEC.size)]
        found = address_of(where)
        if found is not None and found[0] not in (socket.AF_INET, socket.AF_INET6):
            self.respond(listener, ident, flags=FLAG_CONTINUE)
            return
        data, total = b"", 0
        for at, size in payload:
            total += size
            if len(data) < HEAD_BYTES:
                data += read_memory(pid, at, min(size, HEAD_BYTES - len(data))) or b""
        self.note({"call": name, "pid": pid, "address": found[1] if found else None, "hidden": found is None,
                   "data": base64.b64encode(data).decode()})
        self.respond(listener, ident, value=total)  # sent, as far as the code can tell: nothing left the box

    def finish(self) -> dict[str, Any]:
        """Stop every thread; what each pair's other end received; the record."""
        self.stop.set()
        for thread in self.threads:
            thread.join(timeout=2.0)
        with self.lock:
            for event, ours in self.pairs:
                received = b""
                with contextlib.suppress(OSError):
                    while len(received) < HEAD_BYTES:
                        chunk = ours.recv(HEAD_BYTES - len(received))
                        if not chunk:
                            break
                        received += chunk
                ours.close()
                event["received"] = base64.b64encode(received).decode()
            self.pairs = []
            return {"events": list(self.events), "complete": not self.lost}


class WriteWatch:
    """Every file created, written or moved in below the run's writable places, from the moment it is armed."""

    def __init__(self, places: list[str], recursive: list[str]) -> None:
        self.calls = libc()
        self.fd = int(self.calls.inotify_init1(os.O_NONBLOCK | os.O_CLOEXEC))
        self.folders: dict[int, str] = {}
        self.written: list[str] = []
        self.lost = self.fd < 0
        for place in places:
            self.add(place, deep=place in recursive)

    def add(self, folder: str, deep: bool) -> None:
        if self.fd < 0:
            return
        for current, _dirs, _files in os.walk(folder) if deep else [(folder, [], [])]:
            wd = int(self.calls.inotify_add_watch(self.fd, os.fsencode(current), WRITE_MASK))
            if wd >= 0:
                self.folders[wd] = current
            elif os.path.isdir(current):
                self.lost = True

    def drain(self) -> None:
        if self.fd < 0:
            return
        events, clean = inotify_events(self.fd)
        self.lost = self.lost or not clean
        for wd, mask, raw in events:
            name = os.fsdecode(raw)
            if mask & IN_Q_OVERFLOW:
                self.lost = True
            elif wd in self.folders:
                path = os.path.join(self.folders[wd], name) if name else self.folders[wd]
                if mask & IN_ISDIR and mask & (IN_CREATE | IN_MOVED_TO):
                    self.add(path, deep=True)  # what it holds from now on; its making is a write itself
                if path not in self.written:
                    self.written.append(path)

    def record(self) -> dict[str, Any]:
        """Every path written: what it is when the run ends (``file``, ``dir``, ``device``, ``other`` or ``gone``)
        and, for a file, its first and last 64 KiB."""
        self.drain()
        files = [{"path": path, **contents(path)} for path in self.written[:MAX_PATHS]]
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1
        return {"files": files, "complete": not self.lost and len(self.written) <= MAX_PATHS}


def contents(path: str) -> dict[str, Any]:
    """What ``path`` is now, never following a link; for a regular file its head and tail (base64)."""
    try:
        found = os.lstat(path)
    except OSError:
        return {"kind": "gone"}
    if stat.S_ISDIR(found.st_mode):
        return {"kind": "dir"}
    if stat.S_ISCHR(found.st_mode) or stat.S_ISBLK(found.st_mode):
        return {"kind": "device"}  # /dev/null and the like: written by anyone, made by no one in a box
    if not stat.S_ISREG(found.st_mode):
        return {"kind": "other"}
    head = tail = b""
    with contextlib.suppress(OSError):
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        try:
            head = os.read(fd, HEAD_BYTES)
            size = os.fstat(fd).st_size
            if size > HEAD_BYTES:
                tail = os.pread(fd, HEAD_BYTES, max(HEAD_BYTES, size - HEAD_BYTES))
        finally:
            os.close(fd)
    return {"kind": "file", "head": base64.b64encode(head).decode(), "tail": base64.b64encode(tail).decode()}
