"""Tool names: the alias table that maps recorded (raw) tool names to current ones.

Kward's ``TOOL_NAME_MAP`` is the default table (inherited-behaviour §3). Aliases are data: the
storage layer persists them and applies them at load time, so adding an alias changes every
later load and audit without rewriting a stored row, and the raw name is always kept
(``ToolCall.raw_name``). An alias maps one step (``a -> b`` and ``b -> c`` do not chain), so no
table can loop.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import replace
from types import MappingProxyType, ModuleType
from typing import TYPE_CHECKING, overload

from store.core.errors import AliasError
from store.tools.actions import split_action_key, tool_action

if TYPE_CHECKING:  # (imported at the first rename, _model: the read commands that only resolve
    # names, as `tools usage` and `aliases list`, do not pay for the model's dataclasses)
    from store.core.model import InvalidToolCall, Message, ToolCall

__all__ = ["DEFAULT_ALIASES", "UNKNOWN_TOOL", "AliasTable", "display_name"]

#: The name a call gets when its record names no tool.
UNKNOWN_TOOL = "unknown_tool"

#: ``store.core.model``, imported at the first rename (:func:`_model`): a load renames each
#: of its calls, and an import statement there cost 1.3 us a call.
_MODEL: ModuleType | None = None


def _model() -> ModuleType:
    global _MODEL
    if _MODEL is None:
        import store.core.model as model

        _MODEL = model
    return _MODEL

# Kward's map: the four renames, then names that map to themselves, including the ones later
# Kward versions added and the older ``web_research``. Identity entries matter: they declare a
# name as known, which audits use to tell current tools from unknown ones.
DEFAULT_ALIASES: Mapping[str, str] = MappingProxyType(
    {
        "read_file": "read",
        "edit_file": "edit",
        "write_file": "write",
        "run_shell_command": "bash",
        **{
            name: name
            for name in (
                "list_directory",
                "code_search",
                "web_search",
                "read_skill",
                "ask_user_question",
                "summarize_file_structure",
                "retrieve_tool_output",
                "fetch_content",
                "fetch_raw",
                "context_for_task",
                "context_budget_stats",
                "git_commit",
                "open_editor",
                "typesafe_evaluate",
                "web_research",
            )
        },
    }
)


class AliasTable(Mapping[str, str]):
    """An immutable map of raw tool name to current tool name.

    ``resolve`` gives the current name (the raw name when there is no alias); ``display_name``
    adds the ``unknown_tool`` fallback for a missing name; ``reverse`` maps current names back to
    the raw name they replaced (Kward's restore map: ``bash`` -> ``run_shell_command``).
    """

    __slots__ = ("_map", "_reverse", "_scoped", "_scoped_names")

    def __init__(
        self,
        aliases: Mapping[str, str] | Iterable[tuple[str, str]] = (),
        scoped: Mapping[tuple[str, str], str] | Iterable[tuple[str, str, str]] = (),
    ) -> None:
        items = aliases.items() if isinstance(aliases, Mapping) else aliases
        table: dict[str, str] = {}
        for raw, current in items:
            _check_name(raw, "raw")
            _check_name(current, "current")
            table[raw] = current
        self._map: Mapping[str, str] = MappingProxyType(table)
        scoped_items = (
            ((a, r, c) for (a, r), c in scoped.items()) if isinstance(scoped, Mapping) else scoped
        )
        by_agent: dict[tuple[str, str], str] = {}
        for agent, raw, current in scoped_items:
            _check_name(agent, "agent")
            _check_name(raw, "raw")
            _check_name(current, "current")
            by_agent[(agent, raw)] = current
        self._scoped: Mapping[tuple[str, str], str] = MappingProxyType(by_agent)
        self._scoped_names = frozenset(raw for _, raw in by_agent)
        reverse: dict[str, str] = {}
        for raw, current in table.items():
            if raw != current:
                reverse.setdefault(current, raw)
        self._reverse: Mapping[str, str] = MappingProxyType(reverse)

    @classmethod
    def default(cls) -> AliasTable:
        """The default table (Kward's map)."""
        return _DEFAULT

    @classmethod
    def from_rows(cls, rows: Iterable[tuple[str | None, str, str]]) -> AliasTable:
        """A table from ``(agent or None, raw, current)`` rows (``tool_aliases``; an empty
        agent is global too)."""
        plain: list[tuple[str, str]] = []
        scoped: list[tuple[str, str, str]] = []
        for agent, raw, current in rows:
            if agent:
                scoped.append((agent, raw, current))
            else:
                plain.append((raw, current))
        return cls(plain, scoped)

    @classmethod
    def vocabulary(cls) -> AliasTable:
        """The seeded cross-agent vocabulary (``store.tools.vocabulary.VOCABULARY`` and each
        agent's own ``tools``: :func:`store.agents.registry.vocabulary_rows`)."""
        from store.agents.registry import vocabulary_rows

        return cls.from_rows(vocabulary_rows())

    @property
    def scoped(self) -> Mapping[tuple[str, str], str]:
        """``(agent, raw name) -> current name``: aliases that hold for one agent only."""
        return self._scoped

    @property
    def scoped_names(self) -> frozenset[str]:
        """The raw names some agent's scoped alias renames (their name depends on the agent)."""
        return self._scoped_names

    def rows(self) -> list[tuple[str | None, str, str]]:
        """Every alias as ``(agent or None, raw, current)``, global ones first, sorted."""
        return [(None, raw, cur) for raw, cur in sorted(self._map.items())] + [
            (agent, raw, cur) for (agent, raw), cur in sorted(self._scoped.items())]

    def __getitem__(self, raw: str) -> str:
        return self._map[raw]

    def __iter__(self) -> Iterator[str]:
        return iter(self._map)

    def __len__(self) -> int:
        return len(self._map)

    def __repr__(self) -> str:
        if self._scoped:
            return f"AliasTable({dict(self._map)!r}, scoped={dict(self._scoped)!r})"
        return f"AliasTable({dict(self._map)!r})"

    def __eq__(self, other: object) -> bool:
        if isinstance(other, AliasTable):
            return self._map == other._map and self._scoped == other._scoped
        return NotImplemented

    def __hash__(self) -> int:
        return hash((frozenset(self._map.items()), frozenset(self._scoped.items())))

    def resolve(self, raw: str, agent: str | None = None, action: str | None = None) -> str:
        """The current name for a raw name (of a session of ``agent``): the agent's alias,
        else the global alias, else the raw name itself. With the call's ``action`` (or a key
        ``<raw>#<action>``: :mod:`store.tools.actions`), that action's alias wins; an action
        without one is named as the raw name is."""
        if action is None and "#" in raw:
            plain, action = split_action_key(raw)
            if action is not None:
                return self.resolve(plain, agent, action)
        if action:
            keyed = f"{raw}#{action}"
            if agent and self._scoped:
                scoped = self._scoped.get((agent, keyed))
                if scoped is not None:
                    return scoped
            found = self._map.get(keyed)
            if found is not None:
                return found
        if agent and self._scoped:
            scoped = self._scoped.get((agent, raw))
            if scoped is not None:
                return scoped
        return self._map.get(raw, raw)

    def display_name(self, raw: str | None, agent: str | None = None,
                     action: str | None = None) -> str:
        """The name to show: the alias, else the raw name, else ``unknown_tool``."""
        if not raw:
            return UNKNOWN_TOOL
        return self.resolve(raw, agent, action)

    def actions(self, raw: str) -> tuple[str, ...]:
        """The actions of ``raw`` that have a row of their own (``<raw>#<action>``, global or
        scoped), sorted."""
        prefix = f"{raw}#"
        found = {k[len(prefix):] for k in self._map if k.startswith(prefix)}
        found |= {k[len(prefix):] for _, k in self._scoped if k.startswith(prefix)}
        return tuple(sorted(found))

    def reverse(self) -> Mapping[str, str]:
        """Current name -> the raw name it replaced (renames only; the first wins)."""
        return self._reverse

    def raw_names(self, current: str) -> tuple[str, ...]:
        """Every raw name that resolves to ``current`` (``current`` itself included)."""
        names = [raw for raw, cur in self._map.items() if cur == current]
        if current not in names:
            names.insert(0, current)
        return tuple(names)

    def sources(self, current: str) -> tuple[tuple[str | None, str], ...]:
        """Every ``(agent or None, raw)`` whose name is ``current``: global raw names
        (``current`` itself included unless it is aliased away) and scoped ones."""
        found: list[tuple[str | None, str]] = [(None, raw) for raw in self.raw_names(current)
                                               if self._map.get(raw, raw) == current]
        found += [(agent, raw) for (agent, raw), cur in self._scoped.items() if cur == current]
        return tuple(found)

    def with_alias(self, raw: str, current: str, agent: str | None = None) -> AliasTable:
        """A copy with ``raw`` mapped to ``current`` (for sessions of ``agent`` only when
        given)."""
        if agent:
            return AliasTable(self._map, {**self._scoped, (agent, raw): current})
        return AliasTable({**self._map, raw: current}, self._scoped)

    def without_alias(self, raw: str, agent: str | None = None) -> AliasTable:
        """A copy without the alias of ``raw`` (a no-op when it has none)."""
        if agent:
            return AliasTable(self._map, {k: v for k, v in self._scoped.items()
                                          if k != (agent, raw)})
        return AliasTable({k: v for k, v in self._map.items() if k != raw}, self._scoped)

    @overload
    def apply(self, call: ToolCall, agent: str | None = None) -> ToolCall: ...
    @overload
    def apply(self, call: InvalidToolCall, agent: str | None = None) -> InvalidToolCall: ...
    @overload
    def apply(
        self, call: ToolCall | InvalidToolCall, agent: str | None = None
    ) -> ToolCall | InvalidToolCall: ...

    def apply(
        self, call: ToolCall | InvalidToolCall, agent: str | None = None
    ) -> ToolCall | InvalidToolCall:
        """The call with its current name; the name it was recorded with stays in ``raw_name``."""
        model = _MODEL or _model()
        recorded = call.recorded_name
        action = (tool_action(recorded, call.input) if isinstance(call, model.ToolCall)
                  else None)
        current = self.resolve(recorded, agent, action)
        if current == call.name:
            return call
        raw_name = None if current == recorded else recorded
        if type(call) is model.ToolCall:
            return model.renamed(call, current, raw_name)  # type: ignore[no-any-return]
        return replace(call, name=current, raw_name=raw_name)

    def apply_message(self, message: Message) -> Message:
        """The message with every tool call given its current name (other parts unchanged)."""
        model = _MODEL or _model()
        calls = (model.ToolCall, model.InvalidToolCall)
        if not any(isinstance(p, calls) for p in message.parts):
            return message
        parts = tuple(self.apply(p) if isinstance(p, calls) else p for p in message.parts)
        return replace(message, parts=parts)


def _check_name(name: object, what: str) -> None:
    if not isinstance(name, str) or not name:
        raise AliasError(f"an alias needs a non-empty {what} tool name, got {name!r}")


_DEFAULT = AliasTable(DEFAULT_ALIASES)


def display_name(raw: str | None, aliases: AliasTable | None = None) -> str:
    """The display name of a raw tool name under ``aliases`` (default table when omitted)."""
    return (_DEFAULT if aliases is None else aliases).display_name(raw)
