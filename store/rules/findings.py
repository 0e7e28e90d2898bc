"""Findings (a rule that matched a stored call) and their reports: JSON objects and SARIF 2.1.0.

A :class:`Finding` is what ``rules check`` prints and ``--save`` stores. :meth:`Finding.to_json`
uses the project's vocabulary (``rule_id``, ``title``, ``level``, ``tags``, ``session_id``,
``call_id``, ``position``, ``call_index``, ``agent``, ``tool``, ``raw_tool``, ``field``,
``matched``, ``time``: ISO 8601 UTC with ``Z``). :func:`sarif_report` writes one SARIF run:
the rules as ``reportingDescriptor`` s (level: critical/high -> ``error``, medium ->
``warning``, low/informational -> ``note``), each finding as a result whose logical location
is the call (``<session_id>/<position>/<call_index>``).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from store.core.times import as_utc
from store.rules.sigma import LEVELS, Rule

__all__ = ["Finding", "level_reached", "sarif_report"]

SARIF_SCHEMA = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
_SARIF_LEVEL = {"critical": "error", "high": "error", "medium": "warning", "low": "note",
                "informational": "note"}
_MAX_MATCHED = 500


@dataclass(frozen=True, slots=True)
class Finding:
    """A rule that matched a stored call."""

    rule_id: str
    title: str
    level: str
    tags: tuple[str, ...]
    session_id: str
    position: int
    call_index: int
    call_id: str
    agent: str | None
    tool: str
    raw_tool: str
    field: str
    matched: str
    time: datetime | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "rule_id": self.rule_id, "title": self.title, "level": self.level,
            "tags": list(self.tags), "session_id": self.session_id, "call_id": self.call_id,
            "position": self.position, "call_index": self.call_index, "agent": self.agent,
            "tool": self.tool, "raw_tool": self.raw_tool, "field": self.field,
            "matched": self.matched[:_MAX_MATCHED], "created_at": iso_z(self.time),
        }


def iso_z(value: datetime | None) -> str | None:
    if value is None:
        return None
    return as_utc(value).isoformat().replace("+00:00", "Z")


def level_reached(findings: Iterable[Finding], level: str) -> bool:
    """Whether any finding is at ``level`` or above."""
    floor = LEVELS.index(level)
    return any(f.level in LEVELS and LEVELS.index(f.level) >= floor for f in findings)


def sarif_report(findings: Sequence[Finding], rules: Sequence[Rule],
                 version: str) -> dict[str, Any]:
    """A SARIF 2.1.0 log of ``findings`` (``rules``: every rule that ran)."""
    descriptors: list[dict[str, Any]] = []
    index: dict[str, int] = {}
    for rule in rules:
        if rule.id in index:
            continue
        index[rule.id] = len(descriptors)
        descriptors.append({
            "id": rule.id,
            "name": rule.title,
            "shortDescription": {"text": rule.title},
            "fullDescription": {"text": rule.description or rule.title},
            "defaultConfiguration": {"level": _SARIF_LEVEL.get(rule.level, "warning")},
            "properties": {"tags": list(rule.tags), "sigmaLevel": rule.level,
                           "origin": rule.origin},
        })
    results: list[dict[str, Any]] = []
    for finding in findings:
        result: dict[str, Any] = {
            "ruleId": finding.rule_id,
            "level": _SARIF_LEVEL.get(finding.level, "warning"),
            "message": {"text": f"{finding.title}: {finding.matched[:_MAX_MATCHED]}"},
            "locations": [{"logicalLocations": [{
                "name": finding.call_id,
                "fullyQualifiedName":
                    f"{finding.session_id}/{finding.position}/{finding.call_index}",
                "kind": "function",
            }]}],
            "properties": finding.to_json(),
        }
        if finding.rule_id in index:
            result["ruleIndex"] = index[finding.rule_id]
        results.append(result)
    return {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {
                "name": "transcript-store",
                "version": version,
                "informationUri": "https://github.com/transcript-store/transcript-store",
                "rules": descriptors,
            }},
            "results": results,
        }],
    }
