"""A TCP proxy on loopback in front of PostgreSQL that breaks a connection at a chosen
message (issue 37): it reads the frontend/backend protocol message by message, so that it can
lose the server's reply to a COMMIT (the transaction committed; the client never hears so),
kill the connection when COMMIT is sent (the server never gets it: nothing committed), or
kill it when a query holding some text is sent (a read on a connection that dies).

Each :meth:`LostProxy.arm` breaks one connection, once; everything else is forwarded as is.
Connect with ``sslmode=disable&gssencmode=disable`` (:meth:`LostProxy.url`): the proxy reads
plain protocol messages only.
"""

from __future__ import annotations

import socket
import struct
import threading
from typing import Literal

Mode = Literal["lose_commit_reply", "kill_at_commit", "kill_at_query"]


def _read_exact(sock: socket.socket, n: int) -> bytes | None:
    data = bytearray()
    while len(data) < n:
        try:
            chunk = sock.recv(n - len(data))
        except OSError:
            return None
        if not chunk:
            return None
        data += chunk
    return bytes(data)


def _read_message(sock: socket.socket) -> tuple[bytes, bytes] | None:
    """One typed protocol message: (its type byte, the whole message as sent)."""
    head = _read_exact(sock, 5)
    if head is None:
        return None
    (length,) = struct.unpack("!I", head[1:5])
    body = _read_exact(sock, length - 4)
    if body is None:
        return None
    return head[:1], head + body


def _query_text(kind: bytes, message: bytes) -> str:
    """The SQL of a simple query ('Q') or of a parse ('P': name, then the query)."""
    payload = message[5:]
    if kind == b"Q":
        return payload.split(b"\x00", 1)[0].decode("utf-8", "replace")
    if kind == b"P":
        parts = payload.split(b"\x00", 2)
        return parts[1].decode("utf-8", "replace") if len(parts) > 1 else ""
    return ""


def _ends_with_commit(sql: str) -> bool:
    return sql.strip().rstrip(";").strip().upper().endswith("COMMIT")


class _Pair:
    """One client connection and its server connection."""

    def __init__(self, proxy: LostProxy, client: socket.socket) -> None:
        self.proxy = proxy
        self.client = client
        self.server = socket.create_connection(proxy.upstream)
        self.dropping = False  # lose the server's messages up to ReadyForQuery, then close
        self.closed = False

    def start(self) -> None:
        threading.Thread(target=self._upstream, daemon=True).start()
        threading.Thread(target=self._downstream, daemon=True).start()

    def close(self) -> None:
        if self.closed:
            return
        self.closed = True
        for sock in (self.client, self.server):
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            sock.close()

    def _upstream(self) -> None:
        """Client -> server: the startup message (no type byte), then typed messages."""
        head = _read_exact(self.client, 4)
        if head is None:
            return self.close()
        (length,) = struct.unpack("!I", head)
        rest = _read_exact(self.client, length - 4)
        if rest is None:
            return self.close()
        self.server.sendall(head + rest)
        while not self.closed:
            read = _read_message(self.client)
            if read is None:
                return self.close()
            kind, message = read
            action = self.proxy._action(kind, _query_text(kind, message))
            if action == "kill":
                return self.close()
            if action == "lose_reply":
                self.dropping = True
            try:
                self.server.sendall(message)
            except OSError:
                return self.close()

    def _downstream(self) -> None:
        while not self.closed:
            read = _read_message(self.server)
            if read is None:
                return self.close()
            kind, message = read
            if self.dropping:
                if kind == b"Z":  # the COMMIT's reply ends here: it is never delivered
                    self.proxy.lost_replies += 1
                    return self.close()
                continue
            try:
                self.client.sendall(message)
            except OSError:
                return self.close()


class LostProxy:
    """The proxy (see the module docstring); a context manager."""

    def __init__(self, upstream: tuple[str, int] = ("127.0.0.1", 5432)) -> None:
        self.upstream = upstream
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port: int = self._listener.getsockname()[1]
        self._lock = threading.Lock()
        self._armed: list[tuple[Mode, str | None]] = []
        self._pairs: list[_Pair] = []
        #: How many times each break happened.
        self.lost_replies = 0
        self.kills = 0
        threading.Thread(target=self._accept, daemon=True).start()

    def url(self, url: str) -> str:
        """``url`` (a PostgreSQL URL on 127.0.0.1:5432) through the proxy."""
        proxied = url.replace("127.0.0.1:5432", f"127.0.0.1:{self.port}")
        return proxied + ("&" if "?" in proxied else "?") + "sslmode=disable&gssencmode=disable"

    def arm(self, mode: Mode, text: str | None = None, times: int = 1) -> None:
        """Break the next ``times`` connections that send what ``mode`` waits for (for
        ``kill_at_query``: a query holding ``text``)."""
        with self._lock:
            self._armed.extend([(mode, text)] * times)

    def disarm(self) -> None:
        with self._lock:
            self._armed.clear()

    @property
    def armed(self) -> int:
        with self._lock:
            return len(self._armed)

    def _action(self, kind: bytes, sql: str) -> str | None:
        if kind not in (b"Q", b"P") or not sql:
            return None
        with self._lock:
            if not self._armed:
                return None
            mode, text = self._armed[0]
            if mode == "kill_at_query":
                if text is None or text not in sql:
                    return None
            elif not _ends_with_commit(sql):
                return None
            self._armed.pop(0)
            if mode == "lose_commit_reply":
                return "lose_reply"
            self.kills += 1
            return "kill"

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            try:
                pair = _Pair(self, client)
            except OSError:
                client.close()
                continue
            self._pairs.append(pair)
            pair.start()

    def close(self) -> None:
        try:
            self._listener.shutdown(socket.SHUT_RDWR)  # (wakes the accepting thread)
        except OSError:
            pass
        self._listener.close()
        for pair in self._pairs:
            pair.close()

    def __enter__(self) -> LostProxy:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
