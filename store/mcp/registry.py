"""The tools, resources and prompts put on an SDK server (edge layer; public API only).

Every method :func:`store.mcp.archive.tool` marks becomes a tool (read-only, idempotent,
closed world: the annotations say so), its answer one JSON text. A ``StoreError`` (an unknown
session, a bad time, a bad argument condition) becomes an MCP tool error carrying its one-line
message; anything else a tool error that names only its kind (the server logs the details to
stderr): the client never sees a traceback.

Resources: ``transcript://session/{session_id}`` (the session's last turns, as
``get_session`` shows them). Prompts: the common questions, each naming the tools that
answer it.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import store
from store.core.logs import logger
from store.mcp.archive import TOOL_MARK, Archive
from store.mcp.sessions import session_window
from store.mcp.shapes import dumps

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer

log = logger("store.mcp")

#: What the server tells a client about itself (shown to the model by most agents).
INSTRUCTIONS = (
    "The archive of past coding-agent sessions (Claude Code, Codex, Gemini CLI and others) "
    "recorded by transcript-store: what was asked, which tools ran with which arguments, and "
    "what they returned. Read-only. Search it before repeating work: what was tried last "
    "time in this project (search_calls, list_sessions with project), which sessions touched "
    "a file (sessions_touching_file), what a past session did (get_session). Every list is "
    "paged (limit, offset -> next_offset); long texts are cut with a note.")


def tool_error(exc: BaseException) -> Exception:
    """The SDK's tool error for ``exc`` (see the module docstring)."""
    from mcp.server.mcpserver.exceptions import ToolError

    if isinstance(exc, store.StoreError):
        return ToolError(store.hide_passwords(str(exc)))
    log.error("an MCP tool failed", exc_info=exc)
    return ToolError(f"internal error ({type(exc).__name__}); the server's log says more")


def _answering(method: Callable[..., Any]) -> Callable[..., str]:
    """``method`` answering JSON text, its errors tool errors; its signature (the input
    schema) kept."""
    @functools.wraps(method)
    def answer(*args: Any, **kwargs: Any) -> str:
        try:
            return dumps(method(*args, **kwargs))
        except Exception as exc:
            error = tool_error(exc)
            raise error from None
    return answer


def tools_of(archive: Archive) -> list[tuple[str, str, Callable[..., str]]]:
    """Each marked method of ``archive``: its tool name, description and answering callable."""
    found = []
    for attribute in dir(type(archive)):
        function = getattr(type(archive), attribute)
        mark = getattr(function, TOOL_MARK, None)
        if mark is not None:
            name, description = mark
            found.append((name, description, _answering(getattr(archive, attribute))))
    return sorted(found)


def build_server(archive: Archive) -> MCPServer[Any]:
    """An SDK server answering from ``archive``: its tools, resources and prompts."""
    from mcp.server.mcpserver import MCPServer
    from mcp.types import ToolAnnotations

    server: MCPServer[Any] = MCPServer(
        "transcript-store", title="transcript-store: past agent sessions",
        instructions=INSTRUCTIONS, version=store.__version__, log_level="WARNING")
    reading = ToolAnnotations(read_only_hint=True, destructive_hint=False,
                              idempotent_hint=True, open_world_hint=False)
    for name, description, function in tools_of(archive):
        server.add_tool(function, name=name, description=description, annotations=reading,
                        structured_output=False)
    _add_resources(server, archive)
    _add_prompts(server)
    return server


def _add_resources(server: MCPServer[Any], archive: Archive) -> None:
    @server.resource("transcript://session/{session_id}", name="session",
                     description="A past session: its metadata and last turns, each call "
                                 "with its result (get_session reads any window).",
                     mime_type="application/json")
    def session(session_id: str) -> str:
        from mcp.server.mcpserver.exceptions import ResourceError

        try:
            return dumps(session_window(archive.store, archive.resolve(session_id),
                                        archive.shaper, last_turns=3))
        except store.StoreError as exc:
            raise ResourceError(store.hide_passwords(str(exc))) from None


def _add_prompts(server: MCPServer[Any]) -> None:
    @server.prompt(name="what_did_we_try",
                   description="What was tried last time in this repository (optionally "
                               "about a topic).")
    def what_did_we_try(project: str, topic: str = "") -> str:
        about = f" about {topic!r}" if topic else ""
        return (f"Look in the transcript-store archive for what earlier agent sessions in "
                f"{project} tried{about}. Call list_sessions with project={project!r} "
                "(newest first) and search_calls with project="
                f"{project!r}{' and text=' + repr(topic) if topic else ''} to find the "
                "commands, edits and their results; open the relevant sessions with "
                "get_session (around the positions found). Summarise what was tried, what "
                "failed (result_is_error, status=error) and what worked, citing session ids.")

    @server.prompt(name="sessions_touching_file",
                   description="Which past sessions touched a file, and what they did to it.")
    def sessions_touching_file(path: str) -> str:
        return (f"Find the past agent sessions that touched {path!r}: call "
                f"sessions_touching_file with path={path!r}, then search_calls with "
                f"path={path!r} for the calls themselves. For the most recent sessions, open "
                "get_session with around=open_around and say what each one changed or "
                "learnt about the file, citing session ids.")

    @server.prompt(name="failed_commands",
                   description="Shell commands that failed recently (optionally in a "
                               "project).")
    def failed_commands(project: str = "", since: str = "7d") -> str:
        where = f" with project={project!r}" if project else ""
        return (f"Call search_calls with tool='bash', status='error', since={since!r}{where}"
                ". Group the failures by command, say how often each failed and what the "
                "error said, and whether a later call of the same command succeeded.")
