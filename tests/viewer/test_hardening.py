"""Issue 13 on the viewer: ``serve --redact`` redacts every page and download (both
backends); ``GET /session/%00`` is a 404 naming no database; idle, slow and half-open clients
cannot stall the server (300 half-open connections held while a normal request answers),
time-outs, connection bounds, and accepting on when file descriptors run short."""

from __future__ import annotations

import json
import resource
import socket
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import quote

import pytest
from viewer_helpers import fetcher, running

import store
from store import TranscriptStore
from store.viewer import ViewerServer
from store.viewer.server import ServerLimits

OPENAI = "sk-proj-" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8s9T0u1V2w3X4y5Z6"
AWS_ID = "AKIAIOSFODNN7EXAMPLE"
GITHUB = "ghp_" + "1a2B3c4D5e6F7g8H9i0J1k2L3m4N5o6P7q8R"
PASSWORD = "correct-horse-battery"
PEM_HEAD = ("-----BEGIN RSA PRIVATE KEY-----\n"
            "MIIEpAIBAAKCAQEA3Tz2mr7SZiAMfQyuvBjM9Oi6QWh3bZKTw1ZHUQbr0vJqKzN\n")
LEAKS = [OPENAI[8:30], AWS_ID, GITHUB[4:], PASSWORD, "MIIEpAIBAAKCAQEA3Tz2"]
SID = "leaky"


@contextmanager
def serving(url: str, *, redact: bool = False, limits: ServerLimits | None = None
            ) -> Iterator[ViewerServer]:
    with running(url, redactor=store.Redactor() if redact else None, limits=limits) as server:
        yield server


@pytest.fixture
def leaky(store: TranscriptStore, store_url: str) -> str:
    store.append(SID, [
        {"role": "user", "content": f"deploy with {OPENAI}"},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "call_1", "type": "function", "function": {
                "name": "bash", "arguments": json.dumps(
                    {"command": "cat .env", "password": PASSWORD, AWS_ID: 1})}}]},
        {"role": "tool", "tool_call_id": "call_1", "content": "$ head id_rsa\n" + PEM_HEAD},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "call_2", "type": "function", "function": {
                "name": "bash", "arguments": '{"token": "' + GITHUB + '"'}}]},  # invalid JSON
        {"role": "assistant", "content": f"done, token {GITHUB}"},
    ], title=f"leak {GITHUB}", cwd="/home/u")
    return store_url


class TestRedactedViewer:
    def pages(self) -> list[str]:
        s = f"/session/{SID}"
        return ([s, f"{s}/result/2/0", f"{s}/text/1/0", f"{s}/text/3/0", f"{s}/text/4/0",
                 "/sessions", "/search", "/search?tool=bash", "/tools"]
                + [f"{s}/repair?target={t}" for t in store.TARGETS]
                + [f"{s}/export/{t}" for t in store.TARGETS]
                + [f"{s}/export/{t}?repair=1" for t in store.TARGETS])

    def test_without_redact_the_secrets_are_shown(self, leaky):
        with serving(leaky) as server:
            fetch = fetcher(server)
            assert GITHUB in fetch(f"/session/{SID}/text/4/0").text

    def test_every_page_and_download_is_redacted(self, leaky):
        with serving(leaky, redact=True) as server:
            fetch = fetcher(server)
            for path in self.pages():
                reply = fetch(path)
                assert reply.status in (200, 422), (path, reply.status)
                for secret in LEAKS:
                    assert secret not in reply.text, (path, secret)
            assert "[REDACTED:" in fetch(f"/session/{SID}/result/2/0").text
            download = fetch(f"/session/{SID}/export/openai-chat?repair=1")
            assert "attachment" in download.headers["content-disposition"]
            assert "[REDACTED:password]" in download.text

    def test_serve_has_the_redact_options(self):
        from click.testing import CliRunner

        from store.cli.main import cli

        result = CliRunner().invoke(cli, ["serve", "--help"])
        assert "--redact" in result.output and "--redact-pattern" in result.output


class TestNoDatabaseInErrors:
    def test_a_nul_in_the_session_id_is_a_404_naming_no_database(self, leaky):
        with serving(leaky) as server:
            fetch = fetcher(server)
            for path in ("/session/%00", "/session/a%00b/export/anthropic",
                         "/session/%00/result/0/0"):
                reply = fetch(path)

                assert reply.status == 404, (path, reply.status)
                body = reply.text.lower()
                assert "postgres" not in body and "sqlite" not in body and "ts_test" not in body

    def test_a_nul_in_a_parameter_is_a_400(self, leaky):
        with serving(leaky) as server:
            fetch = fetcher(server)
            for path in ("/search?session=%00", "/sessions?q=%00", "/search?text=ab%00c"):
                reply = fetch(path)

                assert reply.status == 400, (path, reply.status)
                assert "postgres" not in reply.text.lower()

    def test_the_store_refuses_nothing_and_finds_nothing_for_a_nul_id(self, leaky):
        with TranscriptStore.open(leaky, read_only=True) as opened:
            for read in (opened.get_session, opened.load):
                with pytest.raises(store.SessionNotFound):
                    read("a\x00b")


# -- stalling -----------------------------------------------------------------------------------

HALF = b"GET /sessions HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: "  # never finished


def raise_fd_limit(wanted: int) -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != resource.RLIM_INFINITY and soft < wanted:
        target = wanted if hard == resource.RLIM_INFINITY else min(wanted, hard)
        resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
    if resource.getrlimit(resource.RLIMIT_NOFILE)[0] < wanted:
        pytest.skip("cannot raise the file descriptor limit")


@contextmanager
def held(port: int, count: int, payload: bytes = HALF) -> Iterator[list[socket.socket]]:
    socks: list[socket.socket] = []
    try:
        for _ in range(count):
            sock = socket.create_connection(("127.0.0.1", port), timeout=30)
            if payload:
                sock.sendall(payload)
            socks.append(sock)
        yield socks
    finally:
        for sock in socks:
            sock.close()


def get(port: int, path: str = "/sessions", timeout: float = 20.0) -> int:
    """A normal request's status; a client time-out fails the test (the server stalled)."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as sock:
        sock.sendall(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
                     .encode())
        data = b""
        while chunk := sock.recv(65536):
            data += chunk
    return int(data.split(b" ", 2)[1])


def closed_by_server(sock: socket.socket, timeout: float = 20.0) -> bytes:
    """What the server sends before closing ``sock`` (fails if it stays open past
    ``timeout``)."""
    sock.settimeout(timeout)
    data = b""
    try:
        while chunk := sock.recv(65536):
            data += chunk
    except ConnectionResetError:  # closed with our unfinished request unread: a reset
        pass
    return data


@pytest.fixture
def small_store(tmp_path: Path) -> str:
    url = f"sqlite:///{tmp_path / 'v.sqlite'}"
    with TranscriptStore.open(url) as opened:
        opened.append("s1", [{"role": "user", "content": "hello"}], title="one")
    return url


def port_of(server: object) -> int:
    return int(server.server_address[1])  # type: ignore[attr-defined]


class TestStalling:
    def test_300_half_open_connections_do_not_stall_a_normal_request(self, small_store):
        raise_fd_limit(1024)
        # Time-outs far away: the normal request must not need any of the 300 to go away.
        limits = ServerLimits(header_timeout=120, idle_timeout=120)
        with serving(small_store, limits=limits) as server:
            port = port_of(server)
            with held(port, 300):
                assert get(port) == 200
                assert get(port, "/session/s1") == 200
                # ... answered while all 300 are still held: nothing was shed or timed out
                assert server.connections >= 300

    def test_idle_connections_that_send_nothing_do_not_stall_either(self, small_store):
        raise_fd_limit(1024)
        with serving(small_store) as server:
            port = port_of(server)
            with held(port, 300, payload=b""):
                assert get(port) == 200
                assert get(port, "/session/s1") == 200

    def test_an_unfinished_request_gets_408_after_the_header_timeout(self, small_store):
        limits = ServerLimits(header_timeout=0.5)
        with serving(small_store, limits=limits) as server, \
                held(port_of(server), 1) as (sock,):
            sock.sendall(b"X-More: 1\r\n")  # trickling does not extend the deadline
            reply = closed_by_server(sock)

            assert reply.startswith(b"HTTP/1.1 408 ")
            assert b"Connection: close" in reply

    def test_a_silent_connection_is_closed_after_the_header_timeout(self, small_store):
        with serving(small_store, limits=ServerLimits(header_timeout=0.5)) as server, \
                held(port_of(server), 1, payload=b"") as (sock,):
            assert closed_by_server(sock) == b""

    def test_a_kept_alive_connection_is_closed_when_idle(self, small_store):
        with serving(small_store, limits=ServerLimits(idle_timeout=0.5)) as server, \
                held(port_of(server), 1,
                     b"GET /sessions HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n") as (sock,):
            reply = closed_by_server(sock)

            assert reply.startswith(b"HTTP/1.1 200 ")  # answered, then closed when idle
            assert reply.count(b"HTTP/1.1 ") == 1

    def test_pipelined_requests_are_answered_in_order(self, small_store):
        two = (b"GET /sessions HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
               b"GET /nope HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
        with serving(small_store) as server, held(port_of(server), 1, two) as (sock,):
            reply = closed_by_server(sock)

        assert reply.startswith(b"HTTP/1.1 200 ")
        assert b"HTTP/1.1 404 " in reply and reply.index(b"HTTP/1.1 404 ") > 0

    def test_at_the_connection_bound_the_longest_waiting_is_dropped(self, small_store):
        with serving(small_store, limits=ServerLimits(max_connections=20)) as server:
            port = port_of(server)
            with held(port, 20) as socks:
                assert get(port) == 200  # a 21st connection is served ...
                assert closed_by_server(socks[0]) == b""  # ... the oldest idle one made room
                assert server.connections <= 20

    @pytest.mark.parametrize("head", [
        b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: " + b"a" * 70_000 + b"\r\n\r\n",
        b"NOT HTTP AT ALL\r\n\r\n",
        b"GET / HTTP/2.0\r\n\r\n",
    ])
    def test_bad_request_heads_are_answered_and_closed(self, small_store, head):
        with serving(small_store) as server, held(port_of(server), 1, head) as (sock,):
            reply = closed_by_server(sock)

        assert reply.split(b" ", 2)[1] in (b"400", b"431", b"505")

    def test_a_request_with_a_body_is_answered_then_closed(self, small_store):
        post = (b"POST /sessions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 5\r\n\r\n"
                b"hello")
        with serving(small_store) as server, held(port_of(server), 1, post) as (sock,):
            reply = closed_by_server(sock)

        assert reply.startswith(b"HTTP/1.1 405 ") and b"Connection: close" in reply


FD_STARVED = r"""
import resource, sys, threading
resource.setrlimit(resource.RLIMIT_NOFILE, (64, resource.getrlimit(resource.RLIMIT_NOFILE)[1]))
import store
from store.viewer import ViewerServer, make_server
from store.viewer.server import ServerLimits
opened = store.TranscriptStore.open(sys.argv[1], read_only=True)
server = make_server(opened, "127.0.0.1", 0, limits=ServerLimits(max_connections=10_000))
server.max_connections = 10_000  # pretend the budget is wrong: accept() itself runs out
print(server.server_address[1], flush=True)
server.serve_forever(0.05)
"""


def test_when_file_descriptors_run_short_the_server_keeps_accepting(small_store):
    raise_fd_limit(1024)
    proc = subprocess.Popen([sys.executable, "-c", FD_STARVED, small_store],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        port = int(proc.stdout.readline())
        with held(port, 150):  # far more than the 64 descriptors the server may hold
            for _ in range(3):
                assert get(port) == 200
        assert proc.poll() is None  # still serving
    finally:
        proc.terminate()
        _, err = proc.communicate(timeout=30)
    assert "Traceback" not in err, err


def test_quoted_ids_still_route(small_store):
    with serving(small_store) as server:
        assert fetcher(server)(f"/session/{quote('s1')}").status == 200
