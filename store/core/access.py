"""Who may reach a store served over the network (domain; stdlib only): a loopback address
needs nothing, any other needs an access token. The viewer (``transcript-store serve``) and the
MCP server (``transcript-store mcp --http``) ask the same question here."""

from __future__ import annotations

import ipaddress
import re

from store.core.errors import ConfigurationError

__all__ = ["TOKEN_PATTERN", "check_access", "is_loopback"]

#: An access token: 16 to 256 URL- and cookie-safe characters.
TOKEN_PATTERN = re.compile(r"[A-Za-z0-9._~-]{16,256}")


def is_loopback(host: str) -> bool:
    """Whether ``host`` (a name or an address, IPv6 in brackets or not) is a loopback one."""
    name = host.strip("[]").lower()
    if name == "localhost":
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def check_access(host: str, token: str | None) -> None:
    """``ConfigurationError`` for a token that is not 16 to 256 URL-safe characters, or for a
    host off loopback without a token (transcripts hold secrets)."""
    if token is not None and TOKEN_PATTERN.fullmatch(token) is None:
        raise ConfigurationError(
            "the access token must be 16 to 256 characters of A-Z a-z 0-9 . _ ~ -")
    if token is None and not is_loopback(host):
        raise ConfigurationError(
            f"refusing to serve on {host!r} without an access token: --host {host} is not "
            "loopback: give --token TOKEN (or --token auto), or bind to 127.0.0.1; "
            "transcripts hold secrets")
