"""The viewer's HTTP side: requests, responses, routing, access control, the server.

Contract:

* Read only. Only ``GET`` and ``HEAD`` are served (``HEAD``: the same headers, no body); every
  other method gets ``405`` with ``Allow: GET, HEAD``. No route writes anything, and the store
  is opened read-only by the caller (``TranscriptStore.open(url, read_only=True)``).
* Every response carries :data:`SECURITY_HEADERS`: a Content-Security-Policy that allows only
  this origin's own script, style, images and fetches (no inline script, no third party),
  ``nosniff``, no framing, no referrer, ``no-store`` caching.
* Access: with a token, every request needs it, as ``?token=`` (which sets an HttpOnly,
  SameSite=Lax cookie and redirects to the same URL without it) or as that cookie; compared
  with :func:`hmac.compare_digest`. Without a token (loopback only: :func:`make_server`
  refuses a non-loopback host without one) the ``Host`` header must name a loopback host, so
  that a web page cannot read the viewer through DNS rebinding.
* Errors: unknown routes and sessions are ``404``, bad parameters ``400``, store errors ``500``
  (database errors without their message, which names the database: that goes to the log);
  unexpected exceptions ``500`` without details.
"""

from __future__ import annotations

import hmac
import sys
import traceback
from collections.abc import Callable
from http import HTTPStatus
from http.cookies import CookieError, SimpleCookie
from importlib import resources
from urllib.parse import urlencode

import store
import store.viewer.costs as costs
import store.viewer.findings as findings
import store.viewer.live as live
import store.viewer.messages as messages
import store.viewer.pages as pages
import store.viewer.session as session
import store.viewer.sessions as sessions
from store.core.access import check_access, is_loopback
from store.viewer.http import BadRequest, NotFound, Request, Response
from store.viewer.server import HttpServer, ServerLimits

__all__ = [
    "COOKIE",
    "SECURITY_HEADERS",
    "BadRequest",
    "NotFound",
    "Request",
    "Response",
    "Viewer",
    "ViewerServer",
    "is_loopback",
    "make_server",
]

#: The cookie that carries the access token after a ``?token=`` visit.
COOKIE = "transcript_store_token"

CSP = ("default-src 'none'; style-src 'self'; script-src 'self'; img-src 'self' data:; "
       "connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'")

SECURITY_HEADERS: tuple[tuple[str, str], ...] = (
    ("Content-Security-Policy", CSP),
    ("X-Content-Type-Options", "nosniff"),
    ("X-Frame-Options", "DENY"),
    ("Referrer-Policy", "no-referrer"),
    ("Cross-Origin-Opener-Policy", "same-origin"),
    ("Cross-Origin-Resource-Policy", "same-origin"),
    ("Cache-Control", "no-store"),
)


_STATIC_TYPES = {
    "viewer.css": "text/css; charset=utf-8",
    "viewer.js": "text/javascript; charset=utf-8",
    "favicon.svg": "image/svg+xml",
}


Route = Callable[["Viewer", Request], Response]


def _host_name(header: str) -> str:
    """The host name of a ``Host`` header (``[::1]:8000`` is ``::1``; ``a:80`` is ``a``)."""
    if header.startswith("["):
        return header[1:].partition("]")[0]
    return header.rpartition(":")[0] if header.count(":") == 1 else header


class Viewer:
    """The application: ``handle(request) -> response`` over one shared read-only store.

    ``token``: the access token every request must carry (``None``: loopback-only access,
    checked with the ``Host`` header). ``page_size``: rows per page of the lists;
    ``messages_per_page``: messages per page of a session. ``redactor``: every page and
    download shows transcripts through it (``store.redact_transcript``; search results and
    session titles too).
    """

    def __init__(self, opened: store.TranscriptStore, *, token: str | None = None,
                 page_size: int = 50, messages_per_page: int = 200,
                 redactor: store.Redactor | None = None) -> None:
        self.store = opened
        self.token = token
        self.page_size = page_size
        self.messages_per_page = messages_per_page
        self.redactor = redactor
        self.transcripts = session.TranscriptCache(opened, redactor=redactor)
        self.costs = costs.CostBook(opened)
        self.live_findings = findings.LiveFindings(opened)

    def redact(self, text: str) -> str:
        """``text`` with its secrets replaced when the viewer redacts, else as it is."""
        return text if self.redactor is None else self.redactor.redact_text(text)[0]

    # -- dispatch -----------------------------------------------------------------------------

    def handle(self, request: Request) -> Response:
        """Answer one request (never raises); security headers are added by the server."""
        if request.method not in ("GET", "HEAD"):
            response = Response.text(405, "method not allowed: this viewer is read-only\n")
            response.headers.append(("Allow", "GET, HEAD"))
            return response
        denied = self._access(request)
        if denied is not None:
            return denied
        if any("\x00" in value for values in request.query.values() for value in values):
            return self._error(400, "a parameter holds a NUL character")
        try:
            return self._route(request)
        except NotFound as exc:
            return self._error(404, str(exc))
        except store.SessionNotFound as exc:
            return self._error(404, str(exc))
        except BadRequest as exc:
            return self._error(400, str(exc))
        except store.DatabaseError as exc:  # its message names the database: the log only
            sys.stderr.write(store.hide_passwords(f"viewer: store error: {exc}\n"))
            return self._error(500, "the database could not answer (see the server's log)")
        except store.StoreError as exc:
            return self._error(500, f"store error: {exc}")
        except Exception:  # the page fails, the server does not
            traceback.print_exc(file=sys.stderr)
            return self._error(500, "internal error (see the server's log)")

    def _error(self, status: int, message: str) -> Response:
        from store.viewer.layout import page
        from store.viewer.markup import html

        phrase = HTTPStatus(status).phrase
        body = html("<h1>{status} {phrase}</h1><p class=\"error\">{message}</p>",
                    status=status, phrase=phrase, message=message)
        return page(f"{status} {phrase}", body, status=status)

    def _access(self, request: Request) -> Response | None:
        if self.token is None:
            host = _host_name(request.headers.get("host", ""))
            if host and not is_loopback(host):
                return Response.text(403, "forbidden: this viewer answers on loopback only\n")
            return None
        given = request.query.get("token", [])
        if given:
            if not hmac.compare_digest(given[0].encode(), self.token.encode()):
                return Response.text(403, "forbidden: wrong token\n")
            rest = [(k, v) for k, vs in request.query.items() if k != "token" for v in vs]
            location = request.path + ("?" + urlencode(rest) if rest else "")
            response = Response.redirect(location if location.startswith("/") and
                                         not location.startswith("//") else "/")
            response.headers.append(("Set-Cookie", f"{COOKIE}={self.token}; HttpOnly; "
                                     "SameSite=Lax; Path=/"))
            return response
        cookie = SimpleCookie()
        try:
            cookie.load(request.headers.get("cookie", ""))
        except CookieError:
            pass
        morsel = cookie.get(COOKIE)
        if morsel is not None and hmac.compare_digest(morsel.value.encode(),
                                                      self.token.encode()):
            return None
        return Response.text(403, "forbidden: open the URL with ?token=... that the server "
                                  "printed when it started\n")

    def _route(self, request: Request) -> Response:
        seg = request.segments
        if not seg:
            return Response.redirect("/sessions", 302)
        head, rest = seg[0], seg[1:]
        if head == "static" and len(rest) == 1:
            return _static(rest[0])
        if head == "favicon.ico" and not rest:
            return _static("favicon.svg")
        simple: dict[str, Route] = {"sessions": sessions.sessions_page,
                                    "tools": pages.tools_page, "search": pages.search_page,
                                    "messages": messages.messages_page,
                                    "findings": findings.findings_page,
                                    "usage": costs.usage_page, "live": live.live}
        if head in simple and not rest:
            return simple[head](self, request)
        if head == "session" and rest:
            return session.route(self, request, rest[0], rest[1:])
        raise NotFound(f"no page at {request.path}")


def _static(name: str) -> Response:
    content_type = _STATIC_TYPES.get(name)
    if content_type is None:
        raise NotFound(f"no static file {name!r}")
    data = resources.files("store.viewer").joinpath("static", name).read_bytes()
    return Response(200, data, content_type, [("Cache-Control", "max-age=3600")])


# -- the server -------------------------------------------------------------------------------


class ViewerServer(HttpServer):
    """The hardened HTTP server (:mod:`store.viewer.server`) answering with one
    :class:`Viewer`; every response carries :data:`SECURITY_HEADERS`."""

    def __init__(self, address: tuple[str, int], viewer: Viewer, *,
                 log_requests: bool = False, limits: ServerLimits | None = None) -> None:
        self.viewer = viewer
        super().__init__(address, self._answer, limits=limits, log_requests=log_requests)

    def _answer(self, method: str, target: str, headers: dict[str, str]
                ) -> tuple[int, list[tuple[str, str]], bytes]:
        response = self.viewer.handle(Request.parse(method, target, headers))
        own = {name for name, _ in response.headers}
        out = [(name, value) for name, value in SECURITY_HEADERS if name not in own]
        out.extend(response.headers)
        out.append(("Content-Type", response.content_type))
        return response.status, out, response.body

    @property
    def url(self) -> str:
        """``http://host:port/`` of the bound socket (IPv6 hosts in brackets)."""
        host, port = self.server_address[0], self.server_address[1]
        name = host.decode() if isinstance(host, bytes) else str(host)
        shown = f"[{name}]" if ":" in name else name
        return f"http://{shown}:{port}/"


def make_server(opened: store.TranscriptStore, host: str = "127.0.0.1", port: int = 0, *,
                token: str | None = None, log_requests: bool = False,
                redactor: store.Redactor | None = None,
                limits: ServerLimits | None = None) -> ViewerServer:
    """A server for ``opened`` bound to ``host:port`` (``port=0``: any free port), not yet
    serving (call ``serve_forever``). Raises ``ValueError`` for a non-loopback host without a
    token, or a token that is not 16 to 256 URL- and cookie-safe characters."""
    check_access(host, token)
    return ViewerServer((host, port), Viewer(opened, token=token, redactor=redactor),
                        log_requests=log_requests, limits=limits)
