"""Helpers of the MCP server tests: a store holding several agents' sessions (the agent
fixtures imported, plus one session with a secret and a long result), the server run as
``transcript-store mcp`` in a subprocess with this worktree's ``store``, and the SDK's own
clients (stdio, streamable HTTP) talking to it."""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

from sqlalchemy import create_engine, text

import store
from store import TranscriptStore

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures" / "agents"
PARENT = "55550000-0000-4000-8000-000000000001"
SUBAGENT = f"{PARENT}:agent-a1b2c3d4e5f6a7b8c"
CODEX = "22222222-2222-4222-8222-222222222222"
SECRET_SESSION = "secret-session-0001"
#: A GitHub token in the shape the redactor knows (not a real one).
SECRET = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
LONG = "line of output\n" * 400
T = TypeVar("T")


def fill(opened: TranscriptStore, tmp: Path) -> None:
    """Every agent fixture imported, plus a session whose call and result hold a secret and
    whose second call returns a long result."""
    target = tmp / "agents"
    shutil.copytree(FIXTURES, target)
    for path in target.rglob("*"):
        if path.is_file():
            os.utime(path, (1_700_000_000, 1_700_000_000))
    # (some fixtures end in a torn line on purpose, and kimi.json is not a session: problems)
    store.import_paths(opened, [target])
    assert opened.count_sessions() >= 8
    opened.append(SECRET_SESSION, [
        {"role": "user", "content": "deploy it"},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "c1", "type": "function", "function": {
                "name": "bash", "arguments": json.dumps(
                    {"command": f"GITHUB_TOKEN={SECRET} ./deploy.sh"})}},
            {"id": "c2", "type": "function", "function": {
                "name": "bash", "arguments": json.dumps({"command": "cat build.log"})}}]},
        {"role": "tool", "tool_call_id": "c1", "content": f"pushed with {SECRET}"},
        {"role": "tool", "tool_call_id": "c2", "content": LONG},
        {"role": "assistant", "content": "deployed"},
    ], agent="test-agent", cwd="/home/u/deploy", title="deploy with a token")
    opened.update_search_index()


def server_env() -> dict[str, str]:
    """The environment of a server subprocess: this worktree's ``store`` first."""
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    env.pop("TRANSCRIPT_STORE_URL", None)
    env.pop("TRANSCRIPT_STORE_MCP_TOKEN", None)
    return env


def run(coroutine: Callable[[], Awaitable[T]]) -> T:
    return asyncio.run(coroutine())  # type: ignore[arg-type]


def stdio_params(url: str, *extra: str) -> Any:
    from mcp.client.stdio import StdioServerParameters

    return StdioServerParameters(command=sys.executable,
                                 args=["-m", "store", "mcp", "--db", url, *extra],
                                 env=server_env(), cwd=str(ROOT))


def over_stdio(url: str, work: Callable[[Any], Awaitable[T]], *extra: str) -> T:
    """Run ``work(session)`` on an initialised SDK client session with the server started
    over stdio (``extra``: more command-line options)."""
    from mcp.client.session import ClientSession
    from mcp.client.stdio import stdio_client

    async def main() -> T:
        with open(os.devnull, "w") as quiet:
            async with stdio_client(stdio_params(url, *extra), errlog=quiet) as (read, write):
                async with ClientSession(read, write) as session:
                    await session.initialize()
                    return await work(session)
    return asyncio.run(main())


async def call(session: Any, tool: str, /, **arguments: Any) -> Any:
    """The JSON answer of ``tool``; fails the test on a tool error."""
    result = await session.call_tool(tool, arguments)
    assert not result.is_error, result.content[0].text
    return json.loads(result.content[0].text)


async def error(session: Any, tool: str, /, **arguments: Any) -> str:
    """The message of the tool error ``tool`` answers; fails the test on a success."""
    result = await session.call_tool(tool, arguments)
    assert result.is_error, result.content[0].text
    return str(result.content[0].text)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def http_server(url: str, *extra: str, host: str = "127.0.0.1") -> Iterator[str]:
    """``transcript-store mcp --http`` running on a free port; yields its endpoint URL
    (always reached through 127.0.0.1)."""
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "store", "mcp", "--http", "--host", host, "--port", str(port),
         "--db", url, *extra], env=server_env(), cwd=ROOT, stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 60
        while True:
            if process.poll() is not None:
                raise AssertionError(f"the server exited: {process.stderr.read()}")  # type: ignore[union-attr]
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise AssertionError("the server did not listen") from None
                time.sleep(0.1)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        if process.stderr is not None:
            process.stderr.close()


def over_http(endpoint: str, work: Callable[[Any], Awaitable[T]],
              headers: dict[str, str] | None = None) -> T:
    """Run ``work(session)`` on an SDK client session over streamable HTTP."""
    import httpx2
    from mcp.client.session import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    async def main() -> T:
        async with httpx2.AsyncClient(headers=headers or {}, timeout=30) as client:
            async with streamable_http_client(endpoint, http_client=client) as streams:
                read, write = streams[0], streams[1]
                async with ClientSession(read, write) as session:
                    await session.initialize()
                    return await work(session)
    return asyncio.run(main())


def database_state(url: str) -> str:
    """A digest of everything stored (every row of every table), to show nothing changed;
    for an SQLite file, also the file's bytes."""
    engine = create_engine(url)
    digest = hashlib.sha256()
    try:
        with engine.connect() as conn:
            names = sorted(conn.dialect.get_table_names(conn))
            for name in names:
                rows = conn.execute(text(f'SELECT * FROM "{name}"')).all()
                digest.update(name.encode())
                for row in sorted(repr(tuple(r)) for r in rows):
                    digest.update(row.encode())
    finally:
        engine.dispose()
    if url.startswith("sqlite:///"):
        digest.update(Path(url.removeprefix("sqlite:///")).read_bytes())
    return digest.hexdigest()
