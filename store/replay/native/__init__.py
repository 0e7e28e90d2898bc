"""A stored session as an agent's own session files, to continue it in that agent (domain).

:func:`native_session` repairs a transcript (no dangling calls, no orphan results, ids the
agent's provider accepts), maps every tool call back to the target agent's own tool names and
argument shapes (:mod:`.tools`), and writes the lines of a Claude Code project JSONL
(:mod:`.claude_code`) or a Codex rollout (:mod:`.codex`) under a new session id, with a
:class:`Fidelity` report of what came over exactly, what was translated, what was dropped and
what was repaired. Placing the file (folders, exclusive create) is the edge's job.
"""

from store.replay.native.fidelity import AGENT_TARGETS, AgentTarget, Fidelity, NativeSession
from store.replay.native.session import native_session

__all__ = ["AGENT_TARGETS", "AgentTarget", "Fidelity", "NativeSession", "native_session"]
