"""The MCP server: agents ask the archive (edge layer; the public API of ``store`` only).

``transcript-store mcp`` serves the store read-only over the Model Context Protocol, on the
official SDK (the ``mcp`` extra): stdio by default, streamable HTTP with ``--http`` (a bearer
token off loopback). Modules, one job each:

- ``shapes.py``: what every answer looks like: pages, cut texts, redaction, JSON;
- ``archive.py``: the tools (one method each on :class:`~store.mcp.archive.Archive`);
- ``sessions.py``: a session as an agent reads it (a window of turns, calls with results);
- ``registry.py``: the tools, resources and prompts put on an SDK server, errors as tool
  errors;
- ``server.py``: opening the store read-only and running a transport (stdio, HTTP + token);
- ``install.py`` / ``agents.py``: each agent's MCP configuration entry, merged into its file,
  and the instructions snippet.

See docs/mcp.md.
"""
