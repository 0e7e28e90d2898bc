"""The fidelity report of a session written as an agent's files, and the written session."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Literal, get_args

__all__ = ["AGENT_TARGETS", "AgentTarget", "Fidelity", "NativeSession"]

AgentTarget = Literal["claude-code", "codex"]
AGENT_TARGETS: tuple[AgentTarget, ...] = get_args(AgentTarget)


@dataclass(slots=True)
class Fidelity:
    """What a native write kept, translated, dropped and repaired (counted by kind)."""

    exact: Counter[str] = field(default_factory=Counter)
    translated: Counter[str] = field(default_factory=Counter)
    dropped: Counter[str] = field(default_factory=Counter)
    repaired: list[str] = field(default_factory=list)

    def lines(self) -> list[str]:
        """The report, one finding a line (``exact: ...``, ``translated: ...`` ...)."""
        out = [f"exact: {_counted(what, n)}" for what, n in self.exact.items()]
        out += [f"translated: {_counted(what, n)}" for what, n in self.translated.items()]
        out += [f"dropped: {_counted(what, n)}" for what, n in self.dropped.items()]
        out += [f"repaired: {what}" for what in self.repaired]
        return out


def _counted(what: str, n: int) -> str:
    return f"{what} (x{n})" if n > 1 else what


@dataclass(frozen=True, slots=True)
class NativeSession:
    """A session as an agent's file: ``lines`` (JSON text, one record each) under
    ``session_id``; ``folder`` (path parts under the agent's home: ``projects/<project>``,
    ``sessions/YYYY/MM/DD``) and ``filename``; ``resume`` the agent's own resume command, to
    run in ``cwd``."""

    agent: AgentTarget
    session_id: str
    cwd: str | None
    folder: tuple[str, ...]
    filename: str
    lines: tuple[str, ...]
    resume: str
    fidelity: Fidelity
