"""Access control and start-up: the token, loopback-only binding, read-only opening, and the
``serve`` command."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner
from viewer_helpers import add_hostile, fetcher, running

from store import DatabaseError, StoreError, TranscriptStore
from store.viewer import is_loopback, make_server
from store.viewer.app import COOKIE, Request, Viewer

TOKEN = "s3cret-token-0123456789"


@pytest.fixture
def sqlite_url(tmp_path: Path) -> str:
    url = f"sqlite:///{tmp_path / 'viewer.sqlite'}"
    with TranscriptStore.open(url) as opened:
        add_hostile(opened)
    return url


def test_token_is_required_on_every_request(sqlite_url: str) -> None:
    with running(sqlite_url, token=TOKEN) as server:
        fetch = fetcher(server)
        for path in ("/sessions", "/static/viewer.css", "/nope", "/"):
            assert fetch(path).status == 403, path
        assert fetch("/sessions?token=wrong-token-0123456789").status == 403
        entered = fetch(f"/search?tool=Bash&token={TOKEN}&page=1")
        assert entered.status == 303
        assert entered.headers["location"] == "/search?tool=Bash&page=1"
        cookie = entered.headers["set-cookie"]
        assert cookie.startswith(f"{COOKIE}={TOKEN};")
        assert "HttpOnly" in cookie and "SameSite=Lax" in cookie
        with_cookie = {"Cookie": f"{COOKIE}={TOKEN}"}
        assert fetch("/sessions", headers=with_cookie).status == 200
        assert fetch("/static/viewer.js", headers=with_cookie).status == 200
        assert fetch("/sessions", headers={"Cookie": f"{COOKIE}=nope"}).status == 403
        assert fetch("/sessions", headers={"Cookie": "garbage;;=="}).status == 403
        # with a token, any Host may ask (the token is the check)
        assert fetch("/sessions", headers={**with_cookie, "Host": "viewer.lan"}).status == 200
        assert fetch("/sessions", "POST", headers=with_cookie).status == 405


def test_non_loopback_needs_a_token(sqlite_url: str) -> None:
    with TranscriptStore.open(sqlite_url, read_only=True) as opened:
        for host in ("0.0.0.0", "192.168.1.20", "::", "example.com"):
            with pytest.raises(ValueError, match="without an access token"):
                make_server(opened, host, 0)
        with pytest.raises(ValueError, match="16 to 256"):
            make_server(opened, "127.0.0.1", 0, token="short")
        with pytest.raises(ValueError, match="16 to 256"):
            make_server(opened, "127.0.0.1", 0, token="a; b=c" * 4)
    assert all(is_loopback(h) for h in ("127.0.0.1", "127.1.2.3", "::1", "[::1]", "localhost"))
    assert not any(is_loopback(h) for h in ("0.0.0.0", "::", "10.0.0.1", "localhost.evil"))


def test_viewer_without_a_socket(sqlite_url: str) -> None:
    with TranscriptStore.open(sqlite_url, read_only=True) as opened:
        viewer = Viewer(opened)
        response = viewer.handle(Request.parse("GET", "/sessions?x=%3C", {"Host": "127.0.0.1"}))
        assert response.status == 200 and b"Hostile" in response.body
        assert viewer.handle(Request.parse("DELETE", "/sessions", {})).status == 405


def test_read_only_store_refuses_writes(sqlite_url: str, tmp_path: Path) -> None:
    from store.cli.serve import _open_read_only

    with _open_read_only(sqlite_url) as opened:
        assert opened.read_only
        with pytest.raises(DatabaseError):
            opened.append("new", [{"role": "user", "content": "hi"}])
    fresh = tmp_path / "fresh.sqlite"
    with pytest.raises(StoreError, match="fresh.sqlite"):  # a read never creates a database
        _open_read_only(f"sqlite:///{fresh}")
    assert not fresh.exists()


def test_serve_refuses_a_public_host_without_token(sqlite_url: str) -> None:
    import store.cli.serve  # noqa: F401 - attaches the command (the lead imports it in cli)
    from store.cli.main import cli

    result = CliRunner().invoke(cli, ["serve", "--db", sqlite_url, "--host", "0.0.0.0"])
    assert result.exit_code == 2 and "--token" in result.output


def test_serve_command_serves_until_stopped(sqlite_url: str) -> None:
    code = "import sys, store.cli.serve; from store.cli.main import main; main(sys.argv[1:])"
    process = subprocess.Popen(
        [sys.executable, "-c", code, "serve", "--db", sqlite_url, "--port", "0", "--quiet"],
        stderr=subprocess.PIPE, text=True, env={**os.environ, "PYTHONUNBUFFERED": "1"})
    try:
        assert process.stderr is not None
        deadline = time.monotonic() + 20
        line = ""
        while time.monotonic() < deadline and "serving" not in line:
            line = process.stderr.readline()
        found = re.search(r"read-only at (http://127\.0\.0\.1:(\d+)/)", line)
        assert found, line
        import http.client

        conn = http.client.HTTPConnection("127.0.0.1", int(found.group(2)), timeout=10)
        conn.request("GET", "/sessions")
        reply = conn.getresponse()
        assert reply.status == 200 and b"Hostile" in reply.read()
        conn.close()
    finally:
        process.terminate()
        process.wait(10)
        if process.stderr is not None:
            process.stderr.close()


@pytest.mark.postgres
def test_postgres_role_with_read_grants_only(postgres_url: str) -> None:
    """Everything the viewer shows works for a role that may only SELECT."""
    from urllib.parse import quote

    from sqlalchemy import create_engine, make_url, text
    from viewer_helpers import HOSTILE_ID, fill_corpus

    role, password = f"ts_viewer_reader_{os.getpid()}", "reader-password"
    database = make_url(postgres_url).database
    admin = create_engine(postgres_url, isolation_level="AUTOCOMMIT")
    try:
        with admin.connect() as conn:
            conn.execute(text("TRUNCATE sessions, source_files CASCADE"))
        with TranscriptStore.open(postgres_url) as opened:
            fill_corpus(opened)
            add_hostile(opened)
        with admin.connect() as conn:
            conn.execute(text(f'DROP ROLE IF EXISTS "{role}"'))
            conn.execute(text(f"CREATE ROLE \"{role}\" LOGIN PASSWORD '{password}'"))
            conn.execute(text(f'GRANT CONNECT ON DATABASE "{database}" TO "{role}"'))
            conn.execute(text(f'GRANT USAGE ON SCHEMA public TO "{role}"'))
            conn.execute(text(f'GRANT SELECT ON ALL TABLES IN SCHEMA public TO "{role}"'))
        reader = make_url(postgres_url).set(username=role, password=password)
        with running(reader.render_as_string(hide_password=False)) as server:
            fetch = fetcher(server)
            hostile = quote(HOSTILE_ID, safe="")
            for path in ("/sessions", "/sessions?tool=Bash", "/tools",
                         "/tools?since=2025-09-01", "/search?text=pwned",
                         "/search?where=pattern%3D%22README.md%22&status=ok",
                         f"/session/{hostile}", f"/session/{hostile}/repair?target=bedrock",
                         f"/session/{hostile}/export/gemini?repair=1",
                         f"/session/{hostile}/result/3/0"):
                assert fetch(path).status == 200, path
    finally:
        with admin.connect() as conn:
            if conn.execute(text("SELECT 1 FROM pg_roles WHERE rolname = :r"),
                            {"r": role}).first():
                conn.execute(text(f'DROP OWNED BY "{role}"'))
                conn.execute(text(f'DROP ROLE "{role}"'))
        admin.dispose()
