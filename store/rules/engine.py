"""Loading rules (files, folders, the built-in pack) and checking calls against them.

:func:`load_rules` reads Sigma YAML files (``.yml``/``.yaml``; a folder: every such file under
it, sorted) or, with no path, the built-in pack (:func:`builtin_rules`). A :class:`RuleSet`
groups the rules by log source (and by the program a rule's ``Image`` condition names, so
that an event meets only the rules that can match its program) and checks calls:
:meth:`RuleSet.check` maps a call to its events (:func:`store.rules.events.call_events`) and
returns one :class:`Match` per rule that any event matched (the first event's matched text).
The result of a call depends only on its tool, agent, cwd and arguments, so a
bounded cache keyed by those answers repeated calls (agents repeat ``git status`` and
``pytest`` all day) without mapping and evaluating them again.
"""

from __future__ import annotations

import importlib
import importlib.resources
import os
from collections import OrderedDict
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from store.core.errors import MissingExtra, RuleError
from store.rules.events import LOG_SOURCES, CallRecord, call_events
from store.rules.sigma import LEVELS, Rule, parse_rules

__all__ = ["Match", "RuleSet", "builtin_rules", "load_rules", "require_extra"]

_SUFFIXES = (".yml", ".yaml")
_CACHE = 65_536  # distinct (tool, agent, cwd, arguments) results kept


def require_extra() -> None:
    """Raise :class:`MissingExtra` naming the `rules` extra when pySigma, bashlex or RE2
    (google-re2) is missing."""
    for module, package in (("sigma", "pysigma"), ("bashlex", "bashlex"),
                            ("re2", "google-re2")):
        try:
            importlib.import_module(module)
        except ImportError as exc:
            raise MissingExtra(
                f"Sigma rules need the {package!r} package: "
                "pip install 'transcript-store[rules]'") from exc


@dataclass(frozen=True, slots=True)
class Match:
    """A rule that matched a call: the rule and the ``(field, text)`` that matched."""

    rule: Rule
    field: str
    matched: str


def builtin_rules() -> list[Rule]:
    """The built-in pack (``store/rules/pack/*.yml``)."""
    require_extra()
    pack = importlib.resources.files("store.rules.pack")
    rules: list[Rule] = []
    for entry in sorted(pack.iterdir(), key=lambda e: e.name):
        if entry.name.endswith(_SUFFIXES):
            rules.extend(parse_rules(entry.read_text(encoding="utf-8"),
                                     f"builtin:{entry.name}"))
    return rules


def load_rules(paths: Iterable[str | Path] = ()) -> list[Rule]:
    """The rules in ``paths`` (files or folders); the built-in pack when none is given.
    ``RuleError`` for a missing path, a folder without rules, or a rule that does not load."""
    require_extra()
    paths = list(paths)
    if not paths:
        return builtin_rules()
    rules: list[Rule] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            files: Iterable[Path] = _rule_files(path)
        elif path.is_file():
            files = [path]
        else:
            raise RuleError(f"{path}: no such rule file or folder")
        found = False
        for file in files:
            found = True
            try:
                text = file.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError) as exc:
                raise RuleError(f"{file}: cannot read: {exc}") from None
            rules.extend(parse_rules(text, str(file)))
        if not found:
            raise RuleError(f"{path}: no .yml or .yaml rule files in this folder")
    _check_unique(rules)
    return rules


def _rule_files(folder: Path) -> Iterator[Path]:
    """The rule files under ``folder`` in the order of their sorted paths (a folder's
    entries by name, each folder's files where its name sorts; folder links not followed,
    unreadable folders passed over), found as they are read: a rule that does not load stops
    the walk there, instead of after listing every file below (``--rules ~`` or ``/``)."""
    try:
        with os.scandir(folder) as listing:
            entries = sorted(listing, key=lambda e: e.name)
    except OSError:
        return
    for entry in entries:
        try:
            if entry.is_dir(follow_symlinks=False):
                yield from _rule_files(folder / entry.name)
            elif Path(entry.name).suffix in _SUFFIXES and entry.is_file():
                yield folder / entry.name
        except OSError:
            continue


def _check_unique(rules: Sequence[Rule]) -> None:
    seen: dict[str, str] = {}
    for rule in rules:
        if rule.id in seen and seen[rule.id] != rule.origin:
            raise RuleError(f"rule id {rule.id} is in both {seen[rule.id]} and {rule.origin}")
        seen[rule.id] = rule.origin


def _subject(fields: Any, hit: str) -> str:
    """What a finding shows: the event's command line, else its file, else its URL, else
    the value that matched."""
    for name in ("CommandLine", "TargetFilename", "Url"):
        value = fields.get(name)
        if isinstance(value, str):
            return value
    return hit


class RuleSet:
    """Rules grouped by the log sources they apply to; checks calls (see the module)."""

    def __init__(self, rules: Iterable[Rule], *, min_level: str | None = None) -> None:
        if min_level is not None and min_level not in LEVELS:
            raise RuleError(f"unknown level {min_level!r}: one of {', '.join(LEVELS)}")
        floor = LEVELS.index(min_level) if min_level else 0
        self.rules: tuple[Rule, ...] = tuple(r for r in rules if r.rank >= floor)
        self._open: dict[tuple[str, str], tuple[Rule, ...]] = {}
        self._gated: dict[tuple[str, str], dict[str, tuple[Rule, ...]]] = {}
        for source in LOG_SOURCES:
            rules_here = [r for r in self.rules if r.applies(*source)]
            self._open[source] = tuple(r for r in rules_here if r.images is None)
            gated: dict[str, list[Rule]] = {}
            for rule in rules_here:
                for program in rule.images or ():
                    gated.setdefault(program, []).append(rule)
            self._gated[source] = {k: tuple(v) for k, v in gated.items()}
        self._order = {rule.id: i for i, rule in enumerate(self.rules)}
        self._bits = {id(rule): 1 << i for i, rule in enumerate(self.rules)}
        self._secrets = any("SecretKind" in r.fields for r in self.rules)
        #: Whether calls need their searchable text (``SecretKind``: see store.rules.events).
        self.reads_secrets = self._secrets
        self._cache: OrderedDict[tuple[Any, ...], tuple[Match, ...]] = OrderedDict()

    def __len__(self) -> int:
        return len(self.rules)

    def check(self, call: CallRecord, arguments_text: str | None = None,
              only: int | None = None) -> tuple[Match, ...]:
        """The rules ``call`` matches, in rule order. ``arguments_text``: the arguments as
        stored (a cache key that spares encoding them again); ``only``: the rules to try
        (bits in the order of :attr:`rules`; None: all)."""
        if arguments_text is None:
            arguments_text = orjson.dumps(call.arguments).decode()
        # SecretKind: looked for or not, and (arguments not valid JSON) in the wire text
        secret = (call.secret_free, call.wire_json if arguments_text == "null" else None
                  ) if self._secrets else None
        key = (call.tool, call.raw_tool, call.agent, call.cwd, arguments_text, secret, only)
        cached = self._cache.get(key)
        if cached is not None:
            self._cache.move_to_end(key)
            return cached
        found = self._evaluate(call, only)
        self._cache[key] = found
        if len(self._cache) > _CACHE:
            self._cache.popitem(last=False)
        return found

    def _evaluate(self, call: CallRecord, only: int | None) -> tuple[Match, ...]:
        first: dict[str, Match] = {}
        bits = self._bits
        for event in call_events(call, secrets=self._secrets):
            source = (event.category, event.product)
            rules = self._open.get(source, ())
            image = event.fields.get("Image")
            if isinstance(image, str):
                program = image.rsplit("/", 1)[-1].lower()
                rules = rules + self._gated.get(source, {}).get(program, ())
            if not rules:
                continue
            lowered: dict[str, Any] = {}
            for rule in rules:
                if rule.id in first or (only is not None and not only & bits[id(rule)]):
                    continue
                hits: list[tuple[str, str]] = []
                if rule.matcher(event.fields, lowered, hits):
                    field, text = hits[0] if hits else ("", "")
                    first[rule.id] = Match(rule, field, _subject(event.fields, text))
        order = self._order
        return tuple(sorted(first.values(), key=lambda m: order[m.rule.id]))
