"""Running the MCP server on a transport (edge layer; public API only).

* **stdio** (the default): the agent starts ``transcript-store mcp`` and talks on its
  standard input and output; logs go to stderr.
* **streamable HTTP** (``serve_http``): uvicorn on ``host:port``, the endpoint at ``/mcp``.
  Loopback by default. With a token (required off loopback, as for the viewer) every request
  must carry ``Authorization: Bearer TOKEN`` (compared in constant time); one without it is
  answered 401 before it reaches the SDK. Without a token the SDK's own check of the
  ``Host`` header keeps a DNS-rebinding page off the loopback server.

The store is opened read-only by the caller (``TranscriptStore.open(read_only=True)``): SQLite
``mode=ro``, PostgreSQL read-only transactions; nothing the server does writes.
"""

from __future__ import annotations

import hmac
import sys
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

import store
from store.core.access import check_access
from store.mcp.archive import Archive
from store.mcp.registry import build_server
from store.mcp.shapes import Shaper

__all__ = ["make_server", "serve_http", "serve_stdio"]

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]
App = Callable[[Scope, Receive, Send], Awaitable[None]]

#: What an access token may be: 16 to 256 URL-safe characters (as the viewer's).


def _require_sdk() -> None:
    try:
        import mcp.server.mcpserver  # noqa: F401
    except ImportError as exc:
        raise store.MissingExtra(
            "transcript-store mcp needs the MCP SDK: pip install 'transcript-store[mcp]' "
            f"({exc})") from None


def make_server(opened: store.TranscriptStore, redactor: store.Redactor | None) -> Any:
    """The SDK server answering from ``opened`` (open it read-only) through ``redactor``."""
    _require_sdk()
    return build_server(Archive(opened, Shaper(redactor)))


def serve_stdio(opened: store.TranscriptStore, redactor: store.Redactor | None) -> None:
    """Serve on standard input and output until the client closes them."""
    make_server(opened, redactor).run("stdio")


def bearer_guard(app: App, token: str) -> App:
    """``app`` behind a check of ``Authorization: Bearer TOKEN`` on every HTTP request."""
    expected = f"Bearer {token}".encode()

    async def guarded(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            given = dict(scope.get("headers") or ()).get(b"authorization", b"")
            if not hmac.compare_digest(given, expected):
                body = b'{"error": "unauthorized: send Authorization: Bearer TOKEN"}'
                await send({"type": "http.response.start", "status": 401,
                            "headers": [(b"content-type", b"application/json"),
                                        (b"www-authenticate", b'Bearer realm="transcript-store"'),
                                        (b"content-length", str(len(body)).encode())]})
                await send({"type": "http.response.body", "body": body})
                return
        await app(scope, receive, send)
    return guarded


def http_app(opened: store.TranscriptStore, redactor: store.Redactor | None, *, host: str,
             token: str | None) -> App:
    """The ASGI application of the streamable HTTP transport (``/mcp``)."""
    check_access(host, token)
    server = make_server(opened, redactor)
    app: App = server.streamable_http_app(host=host)
    return app if token is None else bearer_guard(app, token)


def serve_http(opened: store.TranscriptStore, redactor: store.Redactor | None, *, host: str,
               port: int, token: str | None) -> None:
    """Serve streamable HTTP on ``host:port`` until interrupted."""
    import uvicorn

    app = http_app(opened, redactor, host=host, token=token)
    shown = f"[{host}]" if ":" in host else host
    print(f"transcript-store MCP server (read-only{', redacted' if redactor else ''}) at "
          f"http://{shown}:{port}/mcp{' (bearer token required)' if token else ''}",
          file=sys.stderr, flush=True)
    uvicorn.Server(uvicorn.Config(app, host=host, port=port, log_level="warning",
                                  lifespan="on")).run()
