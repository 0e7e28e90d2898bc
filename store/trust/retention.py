"""Retention: durations, the retention policy a configuration holds, and erasure receipts
(domain; stdlib only).

**Policy shape** (a mapping; in a TOML configuration file, the ``[retention]`` table)::

    [retention]
    older_than = "365d"          # every session whose last message is older is pruned
    every = "1d"                 # watch applies it at most once per this interval
    [retention.agents]           # per agent (sessions.agent), overriding ``older_than``
    codex = "90d"
    claude-code = "180d"

Durations are a whole number and a unit: ``d`` (days), ``w`` (weeks) or ``h`` (hours), at
most :data:`MAX_DURATION` (100 years: beyond it a cutoff would fall before year 1); a longer
one is a ``UsageError`` (in a configuration, a ``ConfigurationError``) naming the setting.
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

__all__ = ["MAX_DURATION", "ErasureReceipt", "RetentionPolicy", "format_duration",
           "parse_duration"]

_DURATION = re.compile(r"^\s*(\d{1,12})\s*([dwh])\s*$")
_UNITS = {"d": timedelta(days=1), "w": timedelta(weeks=1), "h": timedelta(hours=1)}
#: The longest duration accepted: 100 years (of 365.25 days).
MAX_DURATION = timedelta(days=36_525)


def parse_duration(text: str, setting: str = "duration") -> timedelta:
    """``90d``, ``12w``, ``36h`` as a timedelta, at most :data:`MAX_DURATION`; anything else
    is a ``UsageError`` whose message starts with ``setting`` (the option or key read)."""
    found = _DURATION.match(text) if isinstance(text, str) else None
    if found is None or int(found[1]) == 0:
        raise UsageError(f"{setting}: a duration is a positive whole number and d, w or h "
                         f"(such as 90d), not {text!r}")
    amount, unit = int(found[1]), found[2]
    if amount * _UNITS[unit].total_seconds() > MAX_DURATION.total_seconds():  # no overflow
        raise UsageError(f"{setting}: {text.strip()!r} is longer than 100 years "
                         f"(at most {MAX_DURATION.days}d)")
    return amount * _UNITS[unit]


def check_duration(value: timedelta, setting: str) -> None:
    """``UsageError`` naming ``setting`` unless ``value`` is positive and at most
    :data:`MAX_DURATION`."""
    if not timedelta(0) < value <= MAX_DURATION:
        raise UsageError(f"{setting}: a duration must be positive and at most 100 years, "
                         f"not {value}")


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
            default = (parse_duration(data["older_than"], "retention.older_than")
                       if data.get("older_than") is not None else None)
            agents_in = data.get("agents") or {}
            if not isinstance(agents_in, Mapping):
                raise ConfigurationError("retention.agents must be a table of durations")
            agents = {str(k): parse_duration(v, f"retention.agents.{k}")
                      for k, v in agents_in.items()}
            every = (parse_duration(data["every"], "retention.every")
                     if data.get("every") is not None else timedelta(days=1))
        except UsageError as exc:
            raise ConfigurationError(str(exc)) from exc
        return cls(default, agents, every)

    def __post_init__(self) -> None:
        """A policy built in code holds durations as bounded as a parsed one (a cutoff
        before year 1 would overflow): ``UsageError`` naming the field."""
        if self.older_than is not None:
            check_duration(self.older_than, "older_than")
        for agent, value in self.agents.items():
            check_duration(value, f"agents[{agent!r}]")
        check_duration(self.every, "every")

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
    #: the transparency log (store/db/proofs/tlog.py): the tombstone's leaf index, and the
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
