"""``transcript-store mcp --http``: the streamable HTTP transport, driven with the SDK's
``streamable_http_client``, on both backends; the bearer token off loopback."""

from __future__ import annotations

import http.client
import json
import subprocess
import sys
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from mcp_helpers import (
    CODEX,
    SECRET,
    SECRET_SESSION,
    call,
    database_state,
    fill,
    http_server,
    over_http,
    server_env,
)

import store

pytest.importorskip("mcp.server.mcpserver")

TOKEN = "tok-" + "x" * 28


@pytest.fixture
def archive(store_url: str, tmp_path: Path) -> str:
    with store.TranscriptStore.open(store_url) as opened:
        fill(opened, tmp_path)
    return store_url


def _post(endpoint: str, headers: dict[str, str]) -> tuple[int, str]:
    """An MCP initialize request posted by hand (no client: to see the bare refusal)."""
    parts = urlsplit(endpoint)
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "probe", "version": "0"}}})
    conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=30)
    try:
        conn.request("POST", parts.path, body=body, headers={
            "content-type": "application/json",
            "accept": "application/json, text/event-stream", **headers})
        response = conn.getresponse()
        return response.status, response.read().decode()
    finally:
        conn.close()


def test_tools_answer_over_streamable_http(archive):
    before = database_state(archive)

    async def work(session):
        tools = {t.name for t in (await session.list_tools()).tools}
        assert "search_calls" in tools and "get_session" in tools
        found = await call(session, "search_calls", text="deploy.sh")
        assert [m["session_id"] for m in found["items"]] == [SECRET_SESSION]
        assert SECRET not in json.dumps(found)
        window = await call(session, "get_session", session_id=CODEX, last_turns=5)
        assert window["session"]["agent"] == "codex"
        page = await call(session, "list_sessions", limit=2)
        assert page["next_offset"] == 2
        return True

    with http_server(archive) as endpoint:
        assert over_http(endpoint, work)
    assert database_state(archive) == before


def test_on_loopback_without_a_token_a_foreign_host_header_is_refused(archive):
    """(no DNS rebinding: a page of evil.example resolving to 127.0.0.1 cannot ask)"""
    with http_server(archive) as endpoint:
        status, _ = _post(endpoint, {"host": "evil.example"})
        assert status == 421
        port = urlsplit(endpoint).port
        status, body = _post(endpoint, {"host": f"127.0.0.1:{port}"})
        assert status == 200 and "transcript-store" in body


def test_off_loopback_a_request_without_the_token_is_refused(archive):
    with http_server(archive, "--token", TOKEN, host="0.0.0.0") as endpoint:
        status, body = _post(endpoint, {})
        assert status == 401 and "Bearer" in body
        status, _ = _post(endpoint, {"authorization": "Bearer wrong-token-wrong-token"})
        assert status == 401

        async def work(session):
            return await call(session, "list_sessions", limit=1)

        answer = over_http(endpoint, work, headers={"authorization": f"Bearer {TOKEN}"})
        assert len(answer["items"]) == 1


def test_off_loopback_without_a_token_the_server_does_not_start(archive):
    done = subprocess.run(
        [sys.executable, "-m", "store", "mcp", "--http", "--host", "0.0.0.0", "--db", archive],
        env=server_env(), capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert "is not loopback: give --token" in done.stderr
    assert "Traceback" not in done.stderr


def test_a_token_that_is_too_short_is_refused(archive):
    done = subprocess.run(
        [sys.executable, "-m", "store", "mcp", "--http", "--token", "short", "--db", archive],
        env=server_env(), capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert "16 to 256 characters" in done.stderr
