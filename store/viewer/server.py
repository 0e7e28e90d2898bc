"""The viewer's HTTP/1.1 server: one event loop for all socket work, a few threads for pages.

Why not ``http.server.ThreadingHTTPServer``: it gives every connection a thread that blocks
reading the request, with no timeout, so a few hundred clients that open a connection and
send nothing (or half a request) hold a few hundred threads and file descriptors, and once
``accept`` fails with ``EMFILE`` it spins on the error while every other client times out.
A real server (an ASGI/WSGI extra) would fix that too, but the viewer would then need a
dependency and a second code path; the guarantees below take ~250 lines of stdlib.

Guarantees (:class:`ServerLimits` holds the numbers):

* Reading a request and writing a response happen in one thread (``selectors``, non-blocking
  sockets): an idle, slow or half-open client costs one file descriptor and its buffer, never
  a thread. Only a complete request reaches the pool of ``workers`` threads that build pages.
* Time-outs: a request's line and headers must arrive within ``header_timeout`` seconds of its
  first byte (answered ``408``, then closed; trickling bytes does not extend it); a kept-alive
  connection idle for ``idle_timeout`` seconds is closed; a client that does not read its
  response for ``write_timeout`` seconds is dropped.
* Bounds: at most ``max_connections`` open connections (lowered to fit the process's file
  descriptor limit); at the bound, and whenever ``accept`` fails for lack of file descriptors
  (``EMFILE``/``ENFILE``), the connections that have waited longest for their request are
  closed to make room (and, after ``EMFILE``, the bound is lowered to leave 16 descriptors
  free for the database and the pages), so new clients keep being served. When no connection
  can be closed the listening socket pauses for ``accept_pause`` seconds instead of spinning.
  Request heads over ``max_header_bytes`` get ``431``.
* A request with a body (only ``GET``/``HEAD`` are served: bodies are never needed) is
  answered, then its connection closed, so that the body is never read. HTTP/1.0 clients get
  ``Connection: close``; HTTP/1.1 connections are kept alive (requests may be pipelined).
* Log lines (``log_requests``) show control characters as ``\\xNN`` and hide ``token=``
  values.
"""

from __future__ import annotations

import errno
import http.client
import io
import re
import selectors
import socket
import sys
import threading
import time
from collections import deque
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from email.utils import formatdate
from http import HTTPStatus

from store.core.logs import logger

__all__ = ["Answer", "HttpServer", "ServerLimits"]

#: ``(method, target, headers) -> (status, headers, body)``: the application.
Answer = Callable[[str, str, dict[str, str]], tuple[int, list[tuple[str, str]], bytes]]

_log = logger(__name__)
_FD_ERRORS = {errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM}
#: Descriptors left free when ``accept`` ran out: for the database, the log and the workers.
_FD_HEADROOM = 16
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
_REQUEST_LINE = re.compile(r"([!#$%&'*+.^_`|~0-9A-Za-z-]+) (\S+) HTTP/(\d)\.(\d)")


@dataclass(frozen=True, slots=True)
class ServerLimits:
    """The server's bounds and time-outs (seconds); see the module docstring."""

    max_connections: int = 1000
    workers: int = 8
    header_timeout: float = 10.0
    idle_timeout: float = 15.0
    write_timeout: float = 30.0
    max_header_bytes: int = 64 * 1024
    accept_pause: float = 0.1
    backlog: int = 128


_READ, _WORK, _WRITE = "read", "work", "write"


class _Connection:
    __slots__ = ("sock", "address", "state", "buffer", "out", "deadline", "started", "since",
                 "close", "log")

    def __init__(self, sock: socket.socket, address: str, deadline: float) -> None:
        self.sock = sock
        self.address = address
        self.state = _READ
        self.buffer = bytearray()
        self.out = memoryview(b"")
        self.deadline = deadline  # when the current wait ends
        self.started = 0.0  # when the request being read began (0: not yet)
        self.since = time.monotonic()  # when it began waiting for its request
        self.close = False
        self.log = ""


def _shown(text: str) -> str:
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", text)


class HttpServer:
    """Serves ``answer`` on ``address`` (see the module docstring). ``serve_forever()``
    runs the loop until ``shutdown()`` (from another thread); ``server_close()`` frees
    everything."""

    def __init__(self, address: tuple[str, int], answer: Answer, *,
                 limits: ServerLimits | None = None, log_requests: bool = False,
                 server_name: str = "transcript-store-viewer") -> None:
        self.limits = limits or ServerLimits()
        self.answer = answer
        self.log_requests = log_requests
        self.server_name = server_name
        family = socket.AF_INET6 if ":" in address[0] else socket.AF_INET
        self.socket = socket.create_server(address, family=family,
                                           backlog=self.limits.backlog)
        self.socket.setblocking(False)
        self.server_address: tuple[str | bytes, int] = self.socket.getsockname()[:2]
        self.max_connections = min(self.limits.max_connections, _fd_budget())
        self._selector = selectors.DefaultSelector()
        self._wake_r, self._wake_w = socket.socketpair()
        self._wake_r.setblocking(False)
        self._wake_w.setblocking(False)
        self._pool = ThreadPoolExecutor(max_workers=self.limits.workers,
                                        thread_name_prefix="viewer")
        self._connections: dict[socket.socket, _Connection] = {}
        self._done: deque[tuple[_Connection, bytes, bool]] = deque()
        self._stop = False
        self._running = threading.Event()
        self._stopped = threading.Event()
        self._stopped.set()
        self._paused_until = 0.0
        self._closed = False

    # -- the loop ---------------------------------------------------------------------------

    def serve_forever(self, poll_interval: float = 0.5) -> None:
        """Serve until :meth:`shutdown`."""
        if self._closed:
            return
        self._stopped.clear()
        self._running.set()
        selector = self._selector
        selector.register(self.socket, selectors.EVENT_READ, "listen")
        selector.register(self._wake_r, selectors.EVENT_READ, "wake")
        try:
            while not self._stop:
                now = time.monotonic()
                if self._paused_until and now >= self._paused_until:
                    self._paused_until = 0.0
                    selector.register(self.socket, selectors.EVENT_READ, "listen")
                timeout = poll_interval
                deadlines = [c.deadline for c in self._connections.values()
                             if c.state != _WORK]
                if deadlines:
                    timeout = max(0.0, min(timeout, min(deadlines) - now))
                if self._paused_until:
                    timeout = max(0.0, min(timeout, self._paused_until - now))
                for key, events in selector.select(timeout):
                    if key.data == "listen":
                        self._accept()
                    elif key.data == "wake":
                        self._drain_wake()
                    else:
                        connection = key.data
                        if events & selectors.EVENT_READ and connection.state == _READ:
                            self._read(connection)
                        elif events & selectors.EVENT_WRITE and connection.state == _WRITE:
                            self._write(connection)
                self._finish_work()
                self._expire(time.monotonic())
        finally:
            for sock in (self.socket, self._wake_r):
                try:
                    selector.unregister(sock)
                except (KeyError, ValueError):
                    pass
            self._running.clear()
            self._stopped.set()

    def shutdown(self) -> None:
        """Stop :meth:`serve_forever` and wait until it has returned."""
        self._stop = True  # also when the loop has not started yet: it then returns at once
        if not self._running.is_set():
            return
        self._wake()
        self._stopped.wait()

    def server_close(self) -> None:
        """Close the listening socket and every connection; stop the workers."""
        if self._closed:
            return
        self._closed = True
        for connection in list(self._connections.values()):
            self._drop(connection)
        self._pool.shutdown(wait=False, cancel_futures=True)
        for sock in (self.socket, self._wake_r, self._wake_w):
            sock.close()
        self._selector.close()

    @property
    def connections(self) -> int:
        """Connections open now."""
        return len(self._connections)

    # -- accepting ---------------------------------------------------------------------------

    def _accept(self) -> None:
        for _ in range(64):  # a burst at most, then the others get their turn
            try:
                sock, address = self.socket.accept()
            except (BlockingIOError, InterruptedError):
                return
            except OSError as exc:
                if exc.errno in _FD_ERRORS:
                    # Out of descriptors: lower the bound to leave room for the database and
                    # the pages, close the connections that waited longest down to it, and go
                    # on accepting (or, with nothing to close, pause instead of spinning).
                    self.max_connections = max(8, len(self._connections) - _FD_HEADROOM)
                    shed = False
                    while len(self._connections) > self.max_connections and self._shed():
                        shed = True
                    if not shed and not self._shed():
                        self._pause()
                        return
                    continue
                if exc.errno in (errno.ECONNABORTED, errno.EPROTO, errno.EPERM):
                    continue
                raise
            if len(self._connections) >= self.max_connections and not self._shed():
                sock.close()
                continue
            sock.setblocking(False)
            now = time.monotonic()
            connection = _Connection(sock, str(address[0]), now + self.limits.header_timeout)
            connection.started = now
            self._connections[sock] = connection
            self._selector.register(sock, selectors.EVENT_READ, connection)

    def _shed(self) -> bool:
        """Close the connection that has waited longest for its request (else the response
        whose reader has gone longest without reading); ``False`` when every connection is
        being answered by a worker."""
        waiting = [c for c in self._connections.values() if c.state == _READ]
        if waiting:
            self._drop(min(waiting, key=lambda c: c.since))
            return True
        writing = [c for c in self._connections.values() if c.state == _WRITE]
        if writing:
            self._drop(min(writing, key=lambda c: c.deadline))
            return True
        return False

    def _pause(self) -> None:
        if not self._paused_until:
            self._selector.unregister(self.socket)
            self._paused_until = time.monotonic() + self.limits.accept_pause

    # -- reading -----------------------------------------------------------------------------

    def _read(self, connection: _Connection) -> None:
        try:
            data = connection.sock.recv(65536)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            self._drop(connection)
            return
        if not data:
            self._drop(connection)
            return
        if not connection.started:  # the first byte of a request on a kept-alive connection
            connection.started = time.monotonic()
            connection.deadline = connection.started + self.limits.header_timeout
        connection.buffer += data
        self._maybe_request(connection)

    def _maybe_request(self, connection: _Connection) -> None:
        buffer = connection.buffer
        while buffer[:2] == b"\r\n":  # empty lines before a request are allowed (RFC 9112)
            del buffer[:2]
        end = buffer.find(b"\r\n\r\n")
        if end < 0:
            if len(buffer) > self.limits.max_header_bytes:
                self._reply_error(connection, 431, "request header fields too large\n")
            return
        if end > self.limits.max_header_bytes:
            self._reply_error(connection, 431, "request header fields too large\n")
            return
        head = bytes(buffer[:end])
        del buffer[:end + 4]
        line, _, rest = head.partition(b"\r\n")
        request_line = line.decode("latin-1")
        found = _REQUEST_LINE.fullmatch(request_line)
        if found is None:
            self._reply_error(connection, 400, "bad request\n", request_line)
            return
        method, target, major, minor = found.groups()
        if major != "1":
            self._reply_error(connection, 505, "HTTP/1.x only\n", request_line)
            return
        try:
            message = http.client.parse_headers(io.BytesIO(rest + b"\r\n\r\n"))
        except http.client.HTTPException:
            self._reply_error(connection, 400, "bad request\n", request_line)
            return
        headers = dict(message.items())
        lowered = {name.lower(): value for name, value in headers.items()}
        connection_header = lowered.get("connection", "").lower()
        close = (minor == "0" and "keep-alive" not in connection_header) \
            or "close" in connection_header
        if lowered.get("content-length", "0").strip() not in ("", "0") \
                or "transfer-encoding" in lowered:
            close = True  # the body is never read: the connection cannot carry another request
        connection.close = close
        connection.log = request_line
        connection.state = _WORK
        self._selector.unregister(connection.sock)
        self._pool.submit(self._work, connection, method, target, headers)

    # -- working (in a pool thread) ------------------------------------------------------------

    def _work(self, connection: _Connection, method: str, target: str,
              headers: dict[str, str]) -> None:
        try:
            status, extra, body = self.answer(method, target, headers)
        except Exception:  # the application should never raise; the server must not die
            import traceback

            traceback.print_exc(file=sys.stderr)
            status, extra, body = 500, [("Content-Type", "text/plain; charset=utf-8")], \
                b"internal error\n"
        data = self._response_bytes(status, extra, body, head_only=method == "HEAD",
                                    close=connection.close)
        line = connection.log
        if "token=" in line:
            line = line.split("token=")[0] + "token=[hidden]"
        entry = f'{connection.address} - "{_shown(line)}" {status} {len(body)}'
        _log.debug("%s", entry)  # logger store.viewer.server, for -vv and applications
        if self.log_requests:
            sys.stderr.write(entry + "\n")
        self._done.append((connection, data, connection.close))
        self._wake()

    def _response_bytes(self, status: int, headers: list[tuple[str, str]], body: bytes, *,
                        head_only: bool, close: bool) -> bytes:
        try:
            phrase = HTTPStatus(status).phrase
        except ValueError:
            phrase = ""
        lines = [f"HTTP/1.1 {status} {phrase}", f"Server: {self.server_name}",
                 f"Date: {formatdate(usegmt=True)}"]
        lines.extend(f"{name}: {value}" for name, value in headers)
        lines.append(f"Content-Length: {len(body)}")
        if close:
            lines.append("Connection: close")
        head = ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1", "replace")
        return head if head_only else head + body

    def _reply_error(self, connection: _Connection, status: int, text: str,
                     log: str = "") -> None:
        connection.close = True
        connection.log = log
        data = self._response_bytes(status, [("Content-Type", "text/plain; charset=utf-8")],
                                    text.encode(), head_only=False, close=True)
        self._selector.unregister(connection.sock)
        self._start_write(connection, data)

    # -- writing -----------------------------------------------------------------------------

    def _finish_work(self) -> None:
        while self._done:
            connection, data, _ = self._done.popleft()
            if connection.sock in self._connections and not self._closed:
                self._start_write(connection, data)

    def _start_write(self, connection: _Connection, data: bytes) -> None:
        connection.state = _WRITE
        connection.out = memoryview(data)
        connection.deadline = time.monotonic() + self.limits.write_timeout
        self._selector.register(connection.sock, selectors.EVENT_WRITE, connection)
        self._write(connection)

    def _write(self, connection: _Connection) -> None:
        try:
            sent = connection.sock.send(connection.out)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            self._drop(connection)
            return
        connection.out = connection.out[sent:]
        if sent:
            connection.deadline = time.monotonic() + self.limits.write_timeout
        if len(connection.out):
            return
        if connection.close:
            self._drop(connection)
            return
        connection.state = _READ
        connection.started = 0.0
        connection.since = time.monotonic()
        connection.deadline = connection.since + self.limits.idle_timeout
        self._selector.modify(connection.sock, selectors.EVENT_READ, connection)
        if connection.buffer:  # a pipelined request is waiting
            connection.started = time.monotonic()
            connection.deadline = connection.started + self.limits.header_timeout
            self._maybe_request(connection)

    # -- time-outs and closing ----------------------------------------------------------------

    def _expire(self, now: float) -> None:
        for connection in [c for c in self._connections.values()
                           if c.state != _WORK and c.deadline <= now]:
            if connection.state == _READ and connection.started and connection.buffer:
                # a request begun and not finished in time: say so, then close
                self._reply_error(connection, 408, "request timeout\n")
                connection.deadline = now + 1.0  # a short grace to send the 408
            else:
                self._drop(connection)

    def _drop(self, connection: _Connection) -> None:
        if self._connections.pop(connection.sock, None) is None:
            return
        try:
            self._selector.unregister(connection.sock)
        except (KeyError, ValueError):
            pass
        connection.sock.close()

    def _wake(self) -> None:
        try:
            self._wake_w.send(b"x")
        except (BlockingIOError, OSError):
            pass  # already awake, or closed

    def _drain_wake(self) -> None:
        try:
            while self._wake_r.recv(4096):
                pass
        except (BlockingIOError, InterruptedError, OSError):
            pass


def _fd_budget() -> int:
    """Connections the process's file descriptor limit leaves room for (some kept for the
    database, the log and the pool)."""
    try:
        import resource

        soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    except (ImportError, ValueError, OSError):  # pragma: no cover - not POSIX
        return 1_000_000
    if soft == resource.RLIM_INFINITY:
        return 1_000_000
    return max(8, soft - 64)
