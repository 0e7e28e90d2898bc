"""The agent registry: one :class:`AgentDefinition` per agent, found in its own folder (domain).

Every agent lives in one folder below ``store/agents/``: its ``__init__.py`` holds ``AGENT``,
its definition (name, the ``--format`` names it answers to, homes, how its files are told,
what its records are and become, what its files record and what they do not), and its
``reader.py`` the reader, with ``read_file(FileInput, Collector)``. :func:`agents` finds the
folders (no list to update: adding an agent is adding its folder), and everything that
used to keep a list per agent is made from the definitions: detection
(:mod:`store.importers.formats`), the import formats (``store.importers.FORMATS``), the
folders ``import``/``watch`` look in (:mod:`store.capture.agents`), the databases
:mod:`store.importers.agentdb` reads, and the coverage table of ``docs/agents.md``
(``scripts/agents_table.py``; a test fails when the page's table is stale).

**Detection by confidence.** A definition's ``detect`` looks at a file's first records
(:class:`Sample`: the record and its top level in plain keys) and answers with a confidence
from 0 (not mine) to 1 (only this agent writes that): :data:`PROVEN` for a file name or an
envelope no other agent writes, :data:`STRONG` for records of the agent's own shape,
:data:`LIKELY` for a shape another agent may share, :data:`WEAK` for a generic one. Every
agent is asked and the best answer wins, so a new agent whose records are told by a specific
shape is never claimed by an older agent's generic rule.

Definitions import nothing of their reader: reading loads ``<package>.reader`` on first use,
so the command line's options and the homes cost no reader.
"""

from __future__ import annotations

import fnmatch
import importlib
import pkgutil
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from store.agents.homes import AgentFolders
from store.core.errors import AmbiguousRecord, ConfigurationError
from store.core.keys import canonical_keys

if TYPE_CHECKING:  # (the collector and records are the importers'; no import at run time)
    from store.importers.base import Collector, Record

__all__ = ["LIKELY", "PROVEN", "STRONG", "WEAK", "AgentDefinition", "DatabaseLayout",
           "FileInput", "Sample", "agent", "agent_for_format", "agents", "aside_files",
           "aside_folders", "database_agent", "named_file_agents", "samples",
           "vocabulary_rows"]

#: Confidences a detector answers with (see the module docstring).
PROVEN = 1.0
STRONG = 0.9
LIKELY = 0.6
WEAK = 0.4


@dataclass(frozen=True, slots=True)
class Sample:
    """One of a file's first records: ``raw`` as decoded, ``top`` its top level with keys in
    plain snake case (``None`` when it is not an object or its keys are ambiguous)."""

    raw: Any
    top: Mapping[str, Any] | None


def samples(records: Sequence[Any]) -> list[Sample]:
    """The records as :class:`Sample` values (each record's keys made plain once, for every
    detector)."""
    found = []
    for record in records:
        top: Mapping[str, Any] | None = None
        if isinstance(record, Mapping):
            try:
                top, _ = canonical_keys(record)
            except AmbiguousRecord:
                top = None
        found.append(Sample(record, top))
    return found


@dataclass(frozen=True, slots=True)
class FileInput:
    """What a reader gets of a file: its path, the JSON document (``document``; the
    importers' ``NO_DOCUMENT`` when the file is JSON lines) or its JSON lines (``records``,
    ``(line number, value)``), and the number of its last line with content."""

    path: Path
    document: Any
    records: list[Record]
    last_line: int
    has_document: bool
    #: The file's text, for an agent whose files are not JSON (``AgentDefinition.text``:
    #: a Markdown history); ``""`` otherwise.
    text: str = ""


@dataclass(frozen=True, slots=True)
class DatabaseLayout:
    """An agent that keeps its sessions in SQLite: the tables read (each with its ``ORDER
    BY``), and ``claims``, true when a database's tables (name -> columns) are the agent's."""

    tables: Mapping[str, str]
    claims: Callable[[Mapping[str, set[str]]], bool]
    #: The reader of the rows (``function name`` in the agent's reader module).
    reader: str
    #: The database's file names (:func:`fnmatch.fnmatch` patterns): a walk reads a SQLite
    #: file only when an agent names it (a folder may hold any database).
    file_names: tuple[str, ...] = ()
    #: Tables read only when present (a newer or older version's): the others must exist.
    optional: frozenset[str] = frozenset()
    #: The rows read of a table, when not all: an SQL condition over its own columns, fixed
    #: by the definition (a key-value table of which the reader needs a few keys: Cursor's
    #: ``cursorDiskKV``); a table not named here is read whole.
    where: Mapping[str, str] = field(default_factory=dict)
    #: Columns whose values may be zstd frames (Zed's ``threads.data``), ``table -> column``:
    #: a value that starts with zstd's magic number is decompressed before the reader sees it
    #: (:mod:`store.importers.agentdb`; the ``zstd`` extra).
    zstd: Mapping[str, str] = field(default_factory=dict)


#: A detector: a file's path (``None``: judge by the records alone) and first records -> a
#: confidence in [0, 1].
Detector = Callable[[Path | None, Sequence[Sample]], float]


def _no_detector(path: Path | None, first: Sequence[Sample]) -> float:
    return 0.0


def _type_kind(record: Any) -> str | None:
    """A record's kind: its ``type`` (the commonest envelope), else its ``role`` (in any key
    spelling: ``:type``, ``type``)."""
    if not isinstance(record, Mapping):
        return None
    try:
        top, _ = canonical_keys(record)
    except AmbiguousRecord:
        return None
    kind = top.get("type", top.get("role"))
    return kind if isinstance(kind, str) else None


@dataclass(frozen=True, slots=True)
class AgentDefinition:
    """One agent: everything the store knows about its files, in one place."""

    #: The agent's name: the session's ``agent``, its import format, its aliases' scope.
    name: str
    display_name: str
    #: The package holding the definition (``__name__`` of the agent's ``__init__``); its
    #: ``reader`` module reads the files.
    package: str
    #: Where the agent sits in lists (homes, formats): lower first.
    order: int
    #: How a file of the agent is told (see the module docstring). Given no path, it judges
    #: by the records alone (how a forced ``--format`` is checked).
    detect: Detector = _no_detector
    #: Every ``--format`` name the agent answers to (the first is ``name``).
    formats: tuple[str, ...] = ()
    homes: tuple[AgentFolders, ...] = ()
    #: The files are JSON lines (a one-line file is still read as lines).
    lines: bool = False
    #: A file that grew is read from where the last read stopped (capture's offsets).
    incremental: bool = False
    #: Set for agents that keep a SQLite database.
    database: DatabaseLayout | None = None
    #: A record's kind (for the per-kind account of a read) and what each known kind
    #: becomes; a kind missing from ``kinds`` is one the reader has never seen.
    kind_of: Callable[[Any], str | None] = _type_kind
    kinds: Mapping[str, str] = field(default_factory=dict)
    #: What the agent's files record, by column of docs/agents.md's coverage table
    #: (:data:`COVERAGE_COLUMNS`): *file: what the agent writes* -> *store: what is kept*.
    records: Mapping[str, str] = field(default_factory=dict)
    #: The agent's own tool names and what each is in the store's vocabulary (``raw ->
    #: canonical``, scoped to this agent): seeded into ``tool_aliases`` when a store is opened
    #: for writing (:mod:`store.db.schema.seeds`), once, so a user's edit stays.
    tools: Mapping[str, str] = field(default_factory=dict)
    #: Names (:func:`fnmatch.fnmatch` patterns) of the agent's files that a walk reads
    #: although they do not end in ``.json``/``.jsonl`` (``.aider.chat.history.md``).
    file_names: tuple[str, ...] = ()
    #: The agent's files are text, not JSON: read whole into :attr:`FileInput.text` (only
    #: files named by ``file_names``; detection is by name).
    text: bool = False
    #: Files of a folder a walk leaves out because they are read with a session's main file
    #: or are not transcripts (sidecars, settings): ``(folder, its file names) -> names``.
    aside: Callable[[str, Sequence[str]], Collection[str]] | None = None
    #: Sub-folders a walk does not enter (a session's snapshots): ``(folder's sub-folder
    #: names, its file names) -> names``.
    aside_folders: Callable[[Sequence[str], Sequence[str]], Collection[str]] | None = None

    @property
    def format_names(self) -> tuple[str, ...]:
        return self.formats or (self.name,)

    def reader(self) -> Callable[[FileInput, Collector], None]:
        """The agent's ``read_file`` (its reader module, loaded on first use)."""
        module = importlib.import_module(f"{self.package}.reader")
        return cast("Callable[[FileInput, Collector], None]", module.read_file)

    def database_reader(self) -> Callable[[Mapping[str, list[dict[str, Any]]], Collector],
                                          None]:
        """The reader of the agent's database rows (``database.reader``)."""
        if self.database is None:
            raise ConfigurationError(f"{self.name} keeps no database")
        module = importlib.import_module(f"{self.package}.reader")
        return cast("Callable[[Mapping[str, list[dict[str, Any]]], Collector], None]",
                    getattr(module, self.database.reader))

    def tool_rows(self) -> tuple[tuple[str, str], ...]:
        """The tool vocabulary rows scoped to this agent (``raw name, canonical name``), as
        :data:`store.tools.vocabulary.VOCABULARY` seeds them."""
        from store.tools.vocabulary import VOCABULARY

        rows = {raw: name for scope, raw, name in VOCABULARY if scope == self.name}
        rows.update(self.tools)
        return tuple(rows.items())

    def names_file(self, name: str) -> bool:
        """True when ``name`` is one of the agent's files by name (``file_names``, or its
        database's)."""
        patterns = self.file_names + (self.database.file_names if self.database else ())
        return any(fnmatch.fnmatchcase(name, p) for p in patterns)


#: The columns of docs/agents.md's coverage table, in order (``records`` keys).
COVERAGE_COLUMNS: tuple[str, ...] = (
    "calls", "results", "errors", "times", "cwd", "model", "title", "usage", "lineage",
    "not recorded")


@cache
def agents() -> tuple[AgentDefinition, ...]:
    """Every agent's definition, found in the sub-packages of ``store.agents``, by ``order``."""
    import store.agents as package

    found: list[AgentDefinition] = []
    for info in pkgutil.iter_modules(package.__path__):
        if not info.ispkg:
            continue
        module = importlib.import_module(f"{package.__name__}.{info.name}")
        definition = getattr(module, "AGENT", None)
        if not isinstance(definition, AgentDefinition):
            raise ConfigurationError(
                f"store.agents.{info.name} defines no AGENT (an AgentDefinition)")
        found.append(definition)
    found.sort(key=lambda a: (a.order, a.name))
    names = [n for a in found for n in a.format_names]
    if len(names) != len(set(names)):
        raise ConfigurationError(f"two agents answer to one --format name: {sorted(names)}")
    return tuple(found)


def agent(name: str) -> AgentDefinition:
    """The definition of the agent named ``name`` (``ConfigurationError`` when none is)."""
    for definition in agents():
        if definition.name == name:
            return definition
    raise ConfigurationError(f"no agent named {name!r}")


def agent_for_format(fmt: str) -> AgentDefinition | None:
    """The agent that answers to the ``--format`` name ``fmt`` (``None``: not an agent's)."""
    for definition in agents():
        if fmt in definition.format_names:
            return definition
    return None


@cache
def vocabulary_rows() -> tuple[tuple[str | None, str, str], ...]:
    """Every vocabulary row: the seeded rows of :data:`store.tools.vocabulary.VOCABULARY`,
    the editor tools' actions (:data:`store.tools.actions.ACTION_ROWS`), then each agent's own
    ``tools`` (scoped to it), as ``(agent or None, raw, canonical)``."""
    from store.tools.actions import ACTION_ROWS
    from store.tools.vocabulary import VOCABULARY

    rows: dict[tuple[str | None, str], str] = {(a, r): c for a, r, c in VOCABULARY}
    rows.update({(a, r): c for a, r, c in ACTION_ROWS})
    for definition in agents():
        for raw, name in definition.tools.items():
            rows[(definition.name, raw)] = name
    return tuple((a, r, c) for (a, r), c in rows.items())


def named_file_agents(name: str) -> list[AgentDefinition]:
    """The agents that name a file called ``name`` as theirs (``file_names``, databases)."""
    return [a for a in agents() if a.names_file(name)]


def database_agent(name: str) -> bool:
    """True when an agent's database is called ``name``."""
    return any(a.database is not None and a.names_file(name) for a in agents())


def aside_files(folder: str, files: Sequence[str]) -> set[str]:
    """The files of ``folder`` a walk leaves out: each agent's ``aside``."""
    found: set[str] = set()
    for definition in agents():
        if definition.aside is not None:
            found.update(definition.aside(folder, files))
    return found


def aside_folders(dirs: Sequence[str], files: Sequence[str]) -> set[str]:
    """The sub-folders a walk does not enter: each agent's ``aside_folders``."""
    found: set[str] = set()
    for definition in agents():
        if definition.aside_folders is not None:
            found.update(definition.aside_folders(dirs, files))
    return found
