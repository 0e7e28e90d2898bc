"""Importers: reading a file into sessions (formats.py: detection and dispatch over the agent
registry, store/agents/), and the walk that feeds a store (walk.py)."""

from store.agents.registry import agents

#: The plain message lists and this store's own export: formats that are no agent's.
PLAIN_FORMATS: tuple[str, ...] = ("openai-chat", "openai-responses", "anthropic",
                                  "transcript-store")

#: The formats ``store.importers.formats.read_sessions`` reads: the plain ones, then every
#: registered agent's ``--format`` names (its definition, store/agents/<agent>/; no reader is
#: loaded for this list).
FORMATS: tuple[str, ...] = (*PLAIN_FORMATS, *(n for a in agents() for n in a.format_names))
