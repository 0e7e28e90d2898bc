"""Retention: durations, the retention policy a configuration holds, and erasure receipts
(domain; stdlib only).

**Policy shape** (a mapping; in a TOML configuration file, the ``[retention]`` table)::

    [retention]
    older_than = "365d"          # every session whose last message is older is pruned
    every = "1d"                 # watch applies it at most once per this interval
    [retention.agents]           # per agent (sessions.agent), overriding ``older_than``
    codex = "90d"
    claude-code = "180d"

Durations are a whole number and a unit: ``d`` (days), ``w`` (weeks) or ``h`` (hours).
Held sessions are never pruned. ``transcript-store prune --policy FILE`` applies a policy
once; ``transcript-store watch --config FILE`` applies the ``[retention]`` of its configuration
(``store.capture.config``) at its first pass and then at most once per ``every``, through
``TranscriptStore.apply_retention(policy)``. The tombstones' reason names the policy.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from store.core.errors import ConfigurationError, UsageError

__all__ = ["ErasureReceipt", "RetentionPolicy", "format_duration", "parse_duration"]

_DURATION = re.compile(r"^\s*(\d{1,6})\s*([dwh])\s*$")
_UNITS = {"d": timedelta(days=1), "w": timedelta(weeks=1), "h": timedelta(hours=1)}


def parse_duration(text: str) -> timedelta:
    """``90d``, ``12w``, ``36h`` as a timedelta; anything else is a ``UsageError``."""
    found = _DURATION.match(text) if isinstance(text, str) else None
    if found is None or int(found[1]) == 0:
        raise UsageError(f"a duration is a positive whole number and d, w or h "
                         f"(such as 90d), not {text!r}")
    return int(found[1]) * _UNITS[found[2]]


@dataclass(frozen=True, slots=True)
class RetentionPolicy:
    """How long sessions are kept: a default and per-agent overrides (None: kept forever)."""

    older_than: timedelta | None = None
    agents: Mapping[str, timedelta] = field(default_factory=dict)
    #: How often a long-running ``watch`` applies the policy at most.
    every: timedelta = timedelta(days=1)

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any]) -> RetentionPolicy:
        """The policy of a ``[retention]`` table; unknown keys and bad durations raise
        ``ConfigurationError`` naming them."""
        if not isinstance(data, Mapping):
            raise ConfigurationError("the retention policy must be a table")
        unknown = sorted(set(data) - {"older_than", "agents", "every"})
        if unknown:
            raise ConfigurationError(f"unknown retention setting(s): {', '.join(unknown)} "
                                     "(known: older_than, agents, every)")
        try:
            default = (parse_duration(data["older_than"]) if data.get("older_than") is not None
                       else None)
            agents_in = data.get("agents") or {}
            if not isinstance(agents_in, Mapping):
                raise ConfigurationError("retention.agents must be a table of durations")
            agents = {str(k): parse_duration(v) for k, v in agents_in.items()}
            every = (parse_duration(data["every"]) if data.get("every") is not None
                     else timedelta(days=1))
        except UsageError as exc:
            raise ConfigurationError(f"retention: {exc}") from exc
        return cls(default, agents, every)

    def cutoffs(self, now: datetime) -> tuple[datetime | None, dict[str, datetime]]:
        """The default cutoff and each agent's: sessions last active before it go."""
        default = now - self.older_than if self.older_than is not None else None
        return default, {a: now - d for a, d in self.agents.items()}


def format_duration(value: timedelta) -> str:
    """A duration as a policy writes it: ``90d``, ``2w``, ``36h``."""
    hours = int(value.total_seconds() // 3600)
    if hours % (24 * 7) == 0:
        return f"{hours // (24 * 7)}w"
    if hours % 24 == 0:
        return f"{hours // 24}d"
    return f"{hours}h"


@dataclass(frozen=True, slots=True)
class ErasureReceipt:
    """What one erasure removed: the tombstone's fields, and how the bytes were scrubbed."""

    session_id: str
    kind: str
    erased_at: datetime
    reason: str | None
    actor: str | None
    messages: int
    digest: str | None
    scrub: tuple[str, ...] = ()
    #: the transparency log (store/db/tlog.py): the tombstone's leaf index, and the
    #: checkpoint texts (origin, size, root; unsigned) before and after the erasure
    log_leaf: int | None = None
    log_before: str | None = None
    log_after: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"session_id": self.session_id, "kind": self.kind,
                "erased_at": self.erased_at.astimezone(UTC).isoformat().replace("+00:00", "Z"),
                "reason": self.reason,
                "actor": self.actor, "messages": self.messages, "digest": self.digest,
                "scrub": list(self.scrub), "log_leaf": self.log_leaf,
                "log_before": self.log_before, "log_after": self.log_after}
