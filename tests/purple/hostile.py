"""Misbehaving HTTP servers on 127.0.0.1 for client tests: garbage, hangs, floods, cut streams."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress

Behaviour = Callable[[socket.socket, bytes], None]


def _read_request(conn: socket.socket) -> bytes:
    data = b""
    conn.settimeout(5)
    while b"\r\n\r\n" not in data:
        chunk = conn.recv(65536)
        if not chunk:
            return data
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    length = 0
    for line in head.split(b"\r\n"):
        if line.lower().startswith(b"content-length:"):
            length = int(line.split(b":", 1)[1])
    while len(body) < length:
        chunk = conn.recv(65536)
        if not chunk:
            break
        body += chunk
    return head + b"\r\n\r\n" + body


@contextmanager
def hostile_server(behaviour: Behaviour) -> Iterator[str]:
    """Serve every connection with ``behaviour(conn, request_bytes)``; yields the base URL."""
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    listener.settimeout(0.2)
    stop = threading.Event()

    def loop() -> None:
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except OSError:
                continue
            threading.Thread(target=_handle, args=(conn,), daemon=True).start()

    def _handle(conn: socket.socket) -> None:
        with conn, suppress(OSError):
            behaviour(conn, _read_request(conn))

    thread = threading.Thread(target=loop, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}/"
    finally:
        stop.set()
        thread.join(timeout=5)
        listener.close()


def respond(status: int, body: bytes, content_type: str = "application/json",
            extra: str = "") -> Behaviour:
    """Answer every request (card fetches included) with one fixed response."""

    def behave(conn: socket.socket, request: bytes) -> None:
        if request.startswith(b"GET"):
            conn.sendall(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
            return
        head = (f"HTTP/1.1 {status} X\r\nContent-Type: {content_type}\r\nContent-Length: {len(body)}\r\n"
                f"{extra}Connection: close\r\n\r\n")
        conn.sendall(head.encode() + body)

    return behave


def hang(conn: socket.socket, request: bytes) -> None:
    """Accept the request, then say nothing for a long time."""
    time.sleep(30)


def flood(size: int) -> Behaviour:
    """Answer POSTs with ``size`` bytes of chunked body and no Content-Length."""

    def behave(conn: socket.socket, request: bytes) -> None:
        if request.startswith(b"GET"):
            conn.sendall(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
            return
        conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n")
        block = b"x" * 65536
        sent = 0
        while sent < size:
            conn.sendall(f"{len(block):x}\r\n".encode() + block + b"\r\n")
            sent += len(block)
        conn.sendall(b"0\r\n\r\n")

    return behave


def cut_stream(conn: socket.socket, request: bytes) -> None:
    """Start an SSE answer with one working event, then drop the connection mid-stream."""
    if request.startswith(b"GET"):
        conn.sendall(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
        return
    event = (b'data: {"jsonrpc":"2.0","id":"b","result":{"kind":"task","id":"t1","contextId":"c",'
             b'"status":{"state":"working"}}}\n\n')
    conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n")
    conn.sendall(f"{len(event):x}\r\n".encode() + event + b"\r\n")
    time.sleep(0.2)
    conn.shutdown(socket.SHUT_RDWR)
