"""The configuration file that ``watch`` and ``import`` read (domain; stdlib only).

A TOML file, given with ``--config FILE`` or ``TRANSCRIPT_STORE_CONFIG``; every table is
optional::

    [rules]
    on_import = true             # run the rule pack over the calls each import/pass stores
    paths = ["~/rules"]          # rule files or folders (default: the built-in pack)
    min_level = "medium"         # run only rules at this level or above

    [retention]                  # applied by watch (store.trust.retention.RetentionPolicy)
    older_than = "90d"
    every = "1d"                 # at most once per this interval (default 1d)
    [retention.agents]
    codex = "30d"

An unknown table or key, or a value of the wrong type, is a
:class:`~store.core.errors.ConfigurationError` naming the file and what is wrong.
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from store.core.errors import ConfigurationError
from store.core.paths import expand_home
from store.trust.retention import RetentionPolicy

__all__ = ["RulesConfig", "StoreConfig", "load_config", "parse_config"]

_LEVELS = ("informational", "low", "medium", "high", "critical")
_TABLES = ("rules", "retention")


@dataclass(frozen=True, slots=True)
class RulesConfig:
    """The ``[rules]`` table: whether imports run the rules, which rules, from which level."""

    on_import: bool = False
    paths: tuple[str, ...] = ()
    min_level: str | None = None


@dataclass(frozen=True, slots=True)
class StoreConfig:
    """A parsed configuration file (``retention``: None when it has no ``[retention]``)."""

    rules: RulesConfig = field(default_factory=RulesConfig)
    retention: RetentionPolicy | None = None
    origin: str = ""


def load_config(path: str | Path) -> StoreConfig:
    """The configuration in ``path``; ``ConfigurationError`` when it cannot be read or used."""
    file = expand_home(path)
    try:
        text = file.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigurationError(f"{file}: cannot read the configuration: {exc}") from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigurationError(f"{file}: not TOML: {exc}") from None
    return parse_config(data, str(file))


def parse_config(data: Mapping[str, Any], origin: str = "configuration") -> StoreConfig:
    """A :class:`StoreConfig` from the tables of a parsed TOML document."""
    unknown = sorted(set(data) - set(_TABLES))
    if unknown:
        raise ConfigurationError(f"{origin}: unknown table(s) {', '.join(unknown)} "
                                 f"(known: {', '.join(_TABLES)})")
    retention = None
    if "retention" in data:
        try:
            retention = RetentionPolicy.from_mapping(data["retention"])
        except ConfigurationError as exc:
            raise ConfigurationError(f"{origin}: {exc}") from None
    return StoreConfig(_rules(data.get("rules", {}), origin), retention, origin)


def _rules(table: Any, origin: str) -> RulesConfig:
    if not isinstance(table, Mapping):
        raise ConfigurationError(f"{origin}: [rules] must be a table")
    unknown = sorted(set(table) - {"on_import", "paths", "min_level"})
    if unknown:
        raise ConfigurationError(f"{origin}: unknown [rules] setting(s) {', '.join(unknown)} "
                                 "(known: on_import, paths, min_level)")
    on_import = table.get("on_import", False)
    if not isinstance(on_import, bool):
        raise ConfigurationError(f"{origin}: rules.on_import must be true or false, "
                                 f"not {on_import!r}")
    paths = table.get("paths", [])
    if isinstance(paths, str):
        paths = [paths]
    if not isinstance(paths, list) or not all(isinstance(p, str) for p in paths):
        raise ConfigurationError(f"{origin}: rules.paths must be a list of paths")
    base = Path(origin).parent if origin and Path(origin).is_file() else Path()
    resolved = tuple(str(base / expand_home(p)) for p in paths)
    level = table.get("min_level")
    if level is not None and level not in _LEVELS:
        raise ConfigurationError(f"{origin}: rules.min_level must be one of "
                                 f"{', '.join(_LEVELS)}, not {level!r}")
    return RulesConfig(on_import, resolved, level)
